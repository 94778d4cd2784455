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
export { globToRegExp, globMatcher } from '../../lib/glob.js';
export { gaugeSpec, counterSpec, infoSpec, summarySpec, labelKey, FamilyCollector, type ScalarSpec, type SummarySpec } from './families.js';
export { GraceMap, carryAbsent } from './grace.js';
