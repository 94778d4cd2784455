import { z } from 'zod';

/**
 * What the simulated Release Lookup service sends, written from the seed (`version`
 * mandatory, a `type` field) and the upstream facts (the other record fields, the likely
 * layouts of the marketplace's JSON answers). The exporter decodes with schemas of its
 * own; these describe the simulator's answers and let its tests check them.
 */

/** `2020-12-15 14:41:39+00:00`: a space, not `T`, and an explicit UTC offset. */
export const TagDate = z.string().regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\+00:00$/);

export const SimAsset = z.object({
  url: z.url(),
  name: z.string().min(1),
  size: z.number().int().nonnegative().optional(),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/).optional(),
});

/** The full record of `/release` and of the free endpoint. Unknown fields may follow. */
export const SimReleaseRecord = z.looseObject({
  version: z.string().regex(/^\d/),
  /** `release`, `tag`, ...; absent for code hosts without release types. */
  type: z.string().optional(),
  tag_name: z.string().min(1).optional(),
  tag_date: TagDate.optional(),
  v_prefix: z.boolean().optional(),
  /** The code host's id (`github`), not a URL. */
  source: z.string().regex(/^[a-z]+$/).optional(),
  source_url: z.url().optional(),
  assets: z.array(z.url()).optional(),
  assets_with_digests: z.array(SimAsset).optional(),
  from: z.url().optional(),
});
export type SimReleaseRecord = z.infer<typeof SimReleaseRecord>;

const Version = z.string().regex(/^\d/);

/** The free endpoint's `?version` form and marketplace `/version`: a bare string or `{version}`. */
export const SimVersionAnswer = z.union([Version, z.object({ version: Version })]);
/** Marketplace `/source`: `{source}`, `{source_url}` or a bare string, each the tarball URL. */
export const SimSourceAnswer = z.union([z.url(), z.object({ source: z.url() }), z.object({ source_url: z.url() })]);
/** Marketplace `/assets`: `{assets: [url]}` or a bare list. */
export const SimAssetsAnswer = z.union([z.array(z.url()), z.object({ assets: z.array(z.url()) })]);

/** Error body of both offerings (not shown in the seed; chosen). */
export const SimReleaseError = z.object({ error: z.string().min(1), message: z.string().min(1) });
