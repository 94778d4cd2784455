import type { SourceUnit } from '../../upstream/monitoring/metric-catalogue.js';

/**
 * Conversion to Prometheus base units at the edge. The agent's "kilobytes" are
 * kibibytes (it divides byte counts by 1024), so KB → bytes is × 1024.
 */

export const BYTES_PER_KIBIBYTE = 1024;

export function percentToRatio(percent: number): number {
  return percent / 100;
}

export function millisecondsToSeconds(ms: number): number {
  return ms / 1000;
}

export function kibibytesToBytes(kib: number): number {
  return kib * BYTES_PER_KIBIBYTE;
}

/** The Prometheus base unit a source unit converts to; undefined for unitless values. */
export type BaseUnit = 'ratio' | 'bytes' | 'seconds';

export function baseUnitOf(unit: SourceUnit): BaseUnit | undefined {
  switch (unit) {
    case 'percent':
      return 'ratio';
    case 'bytes':
    case 'kilobytes':
      return 'bytes';
    case 'milliseconds':
    case 'seconds':
      return 'seconds';
    case 'count':
    case 'status':
    case 'none':
      return undefined;
  }
}

/** Converts a value as the agent sends it (`unit`) to its base unit. */
export function toBaseUnit(value: number, unit: SourceUnit): number {
  switch (unit) {
    case 'percent':
      return percentToRatio(value);
    case 'kilobytes':
      return kibibytesToBytes(value);
    case 'milliseconds':
      return millisecondsToSeconds(value);
    case 'bytes':
    case 'seconds':
    case 'count':
    case 'status':
    case 'none':
      return value;
  }
}

/**
 * Milliseconds since the epoch of an RFC 3339 timestamp. Throws on text `Date.parse`
 * cannot read, naming the field, so a bad upstream value is never silently turned into NaN.
 */
export function parseTimestampMs(rfc3339: string, field: string): number {
  const ms = Date.parse(rfc3339);
  if (Number.isNaN(ms)) throw new Error(`${field}: not an RFC 3339 timestamp: ${JSON.stringify(rfc3339)}`);
  return ms;
}

/** Seconds since the epoch (for `_timestamp_seconds` metrics) of an RFC 3339 timestamp. */
export function timestampSeconds(rfc3339: string, field: string): number {
  return parseTimestampMs(rfc3339, field) / 1000;
}

export function boolToNumber(value: boolean): 0 | 1 {
  return value ? 1 : 0;
}
