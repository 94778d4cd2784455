import { z } from 'zod';

/**
 * zod schemas of the layouts' envelopes (layouts/bodies.ts). The items inside are the
 * shape set's, so they are only required to be objects here; the envelopes are exact.
 */

const Href = z.strictObject({ href: z.string().min(1) });
const HalLinks = z.record(z.string(), z.union([Href, z.array(Href)]));

/** A HAL resource: its fields and `_links` with at least `self`. */
export const HalResource = z.looseObject({ _links: HalLinks.and(z.object({ self: Href })) });

export const HalList = z.strictObject({
  _embedded: z.record(z.string(), z.array(HalResource)),
  _links: z.strictObject({ self: Href, next: Href.optional() }),
  total: z.number().int().nonnegative(),
  page_size: z.number().int().nonnegative(),
});

const Identifier = z.strictObject({ type: z.string().min(1), id: z.string().min(1) });

export const JsonApiResourceObject = z.strictObject({
  id: z.string().min(1),
  type: z.string().min(1),
  attributes: z.record(z.string(), z.unknown()).refine((a) => !('id' in a) && !('type' in a), 'attributes may not be named id or type'),
  relationships: z.record(z.string(), z.strictObject({ data: z.union([Identifier, z.array(Identifier)]) })).optional(),
});

const JsonApiVersion = z.strictObject({ version: z.literal('1.1') });

export const JsonApiList = z.strictObject({
  jsonapi: JsonApiVersion,
  data: z.array(JsonApiResourceObject),
  links: z.strictObject({ self: z.url(), next: z.url().optional() }),
  meta: z.strictObject({ total: z.number().int().nonnegative() }),
  included: z.array(JsonApiResourceObject).optional(),
});

export const JsonApiDocument = z.strictObject({
  jsonapi: JsonApiVersion,
  data: JsonApiResourceObject,
  included: z.array(JsonApiResourceObject).optional(),
});

const success = { success: z.literal(true), errors: z.array(z.unknown()).length(0), messages: z.array(z.unknown()) };

export const EnvelopeList = z.strictObject({
  ...success,
  result: z.array(z.record(z.string(), z.unknown())),
  result_info: z.strictObject({
    page: z.number().int().positive(),
    per_page: z.number().int().nonnegative(),
    count: z.number().int().nonnegative(),
    total_count: z.number().int().nonnegative(),
    total_pages: z.number().int().positive(),
  }),
});

export const EnvelopeObject = z.strictObject({ ...success, result: z.record(z.string(), z.unknown()) });

/** `{key, value}` pairs (the account's limits and usage in the envelope layout). */
export const KeyValueList = z.array(z.strictObject({ key: z.string().min(1), value: z.unknown() }));
