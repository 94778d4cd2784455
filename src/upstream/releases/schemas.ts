import { z } from 'zod';

/**
 * The simulator's layouts of the Release Lookup API. The client reads any plausible layout
 * with src/upstream/releases/decode.ts, not with these; kept only until the simulator owns
 * its own copy.
 * Only `version` is mandatory in a release record; every other field is optional because
 * the seed leaves them "not shown" and the real service derives them from the code host.
 */

export const AssetWithDigest = z.object({
  url: z.string(),
  name: z.string(),
  size: z.number().int().nonnegative().optional(),
  digest: z.string().optional(),
});

export const ReleaseRecord = z.object({
  version: z.string().min(1),
  type: z.string().optional(),
  tag_name: z.string().optional(),
  /** Written like `2020-12-15 14:41:39+00:00` (a space, not `T`). */
  tag_date: z.string().optional(),
  v_prefix: z.boolean().optional(),
  source: z.string().optional(),
  source_url: z.string().optional(),
  assets: z.array(z.string()).optional(),
  assets_with_digests: z.array(AssetWithDigest).optional(),
  from: z.string().optional(),
});
export type ReleaseRecord = z.infer<typeof ReleaseRecord>;

/** The free endpoint's `?version` form: a bare JSON string or an object with `version`. */
export const VersionOnly = z.union([
  z.string().min(1),
  z.object({ version: z.string().min(1) }),
]);
export type VersionOnly = z.infer<typeof VersionOnly>;

/** Marketplace `/version`. */
export const MarketplaceVersion = z.object({ version: z.string().min(1) });
/** Marketplace `/source`: the simulator sends `source`; `source_url` is accepted too. */
export const MarketplaceSource = z.union([
  z.object({ source: z.string().min(1) }),
  z.object({ source_url: z.string().min(1) }),
]);
/** Marketplace `/assets`. */
export const MarketplaceAssets = z.object({ assets: z.array(z.string()) });

/** Error body of both release offerings (their errors are "not shown" in the seed). */
export const ReleaseErrorBody = z.object({
  error: z.string(),
  message: z.string(),
});
