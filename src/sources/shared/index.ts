export { sanitizeName, replaceInvalidNameChars, prefixedLabelName, isDiscouragedLabelName } from './names.js';
export {
  BYTES_PER_KIBIBYTE,
  percentToRatio,
  millisecondsToSeconds,
  kibibytesToBytes,
  baseUnitOf,
  toBaseUnit,
  parseTimestampMs,
  timestampSeconds,
  boolToNumber,
  type BaseUnit,
} from './units.js';
export { globToRegExp, globMatcher } from './glob.js';
export { gaugeSpec, counterSpec, infoSpec, labelKey, FamilyCollector, type ScalarSpec } from './families.js';
