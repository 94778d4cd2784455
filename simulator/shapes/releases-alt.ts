import type { SimReleaseRecord } from '../releases/schemas.js';
import type { ShapeSet } from './shapes.js';

/**
 * The two shape sets of the Release Lookup API's bodies the seed does not show: the
 * marketplace's `/version`, `/source`, `/assets`, the free endpoint's `?version`, and the
 * record's fields beyond `version` and `type` (the nested set answers as the standard one
 * here). Same data, other legal layouts (the upstream facts list them).
 */

/** Marketplace `/version`: `{version}` (standard) or a bare JSON string (alt). */
export const marketplaceVersionBody = (record: SimReleaseRecord, shape: ShapeSet): unknown =>
  shape === 'alt' ? record.version : { version: record.version };

/** Marketplace `/source`: `{source: <tarball URL>}` (standard) or the bare URL string (alt). */
export const marketplaceSourceBody = (record: SimReleaseRecord, shape: ShapeSet): unknown =>
  shape === 'alt' ? (record.source_url ?? '') : { source: record.source_url ?? '' };

/** Marketplace `/assets`: `{assets: [urls]}` (standard) or the bare list (alt). */
export const marketplaceAssetsBody = (record: SimReleaseRecord, shape: ShapeSet): unknown =>
  shape === 'alt' ? (record.assets ?? []) : { assets: record.assets ?? [] };

/** Free endpoint `?version`: a bare JSON string (standard) or `{version}` (alt). */
export const freeVersionBody = (record: SimReleaseRecord, shape: ShapeSet): unknown =>
  shape === 'alt' ? { version: record.version } : record.version;

/**
 * The record in the alternative set: empty lists and a false `v_prefix` left out (a
 * service may omit what it has nothing to say about), and the code host's draft and
 * pre-release flags passed through as fields a client does not know.
 */
export function releaseRecordBody(record: SimReleaseRecord, shape: ShapeSet): SimReleaseRecord {
  if (shape !== 'alt') return record;
  const out: Record<string, unknown> = { ...record, prerelease: false, draft: false };
  if (record.v_prefix === false) delete out.v_prefix;
  if (record.assets?.length === 0) delete out.assets;
  if (record.assets_with_digests?.length === 0) delete out.assets_with_digests;
  return out as SimReleaseRecord;
}
