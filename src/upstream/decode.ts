import { InvalidResponseError, type RequestContext } from './http/errors.js';
import type { DecodeOptions, Decoded, JsonDecoder } from './tolerant/body.js';

/**
 * Response decoding: parse the JSON, then read it tolerantly (src/upstream/tolerant/):
 * lists wherever they plausibly sit, unknown fields ignored, optional fields nullable, one
 * malformed item dropped and reported instead of failing the whole response. The shapes
 * accepted per endpoint are in docs/upstream-shapes.md; each endpoint's decoder lives with the
 * source that polls it (src/sources/<name>/decode.ts).
 */

export type { DecodeOptions, Decoded, DroppedItem, JsonDecoder } from './tolerant/body.js';
export type { FieldNote } from './tolerant/fields.js';
export { DROP_REASONS, type DropReason } from './tolerant/values.js';

/** Parses a body as JSON; a body that is not JSON fails with a message naming what arrived. */
export function parseJsonBody(body: Buffer, context: RequestContext, contentType?: string): unknown {
  const text = body.toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const what = contentType ? ` (content-type ${contentType.split(';')[0]?.trim()})` : '';
    // V8 quotes the start of the body in its message; the body is upstream text that may
    // echo anything, credentials included, so the excerpt is left out.
    const reason = error instanceof Error ? error.message.replace(/"[\s\S]*"(\.\.\.)?/, '(excerpt omitted)') : 'unparsable';
    const message =
      text.trim().length === 0 ? `empty body where JSON was expected${what}` : `body is not valid JSON${what}: ${reason}`;
    throw new InvalidResponseError(context, message, [`body: ${reason}`]);
  }
}

/** Parses and decodes in one step. */
export function decodeBody<T>(decoder: JsonDecoder<T>, body: Buffer, context: RequestContext, contentType?: string, options?: DecodeOptions): Decoded<T> {
  return decoder(decoder.fromBytes?.(body) ?? parseJsonBody(body, context, contentType), context, options);
}
