import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { monitoringDecoders } from '../../test/support/decoders.js';
import { decodeBody, type JsonDecoder } from '../upstream/decode.js';
import { InvalidResponseError, type RequestContext } from '../upstream/http/errors.js';

/**
 * Whatever bytes or JSON an upstream sends, every decoder either returns a value or throws
 * an InvalidResponseError: never another exception (a TypeError from a field that is not
 * what it should be would fail the job as an internal error), never a hang. The property
 * tests of shapes.property.test.ts cover the reasonable layouts; this covers the rest.
 */

const context: RequestContext = { api: 'monitoring', endpoint: '/fuzz' };
const RUNS = { numRuns: 200 };

function outcome(run: () => unknown): 'ok' | 'refused' {
  try {
    run();
    return 'ok';
  } catch (error) {
    if (error instanceof InvalidResponseError) return 'refused';
    throw error;
  }
}

const names = Object.keys(monitoringDecoders) as (keyof typeof monitoringDecoders)[];
const decoder = (name: keyof typeof monitoringDecoders): JsonDecoder<unknown> => monitoringDecoders[name];
/** JSON close to what the API sends: objects with its field names, lists of them, odd scalars. */
const field = fc.constantFrom('hosts', 'uuid', 'id', 'name', 'series', 'points', 'timestamp', 'value', 'checks', 'checked_at', 'alerts', 'type', 'total', 'interval', 'data', 'items', 'metrics');
const near = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 1 }),
    fc.array(tie('node'), { maxLength: 4 }),
    fc.dictionary(field, tie('node'), { maxKeys: 5 }),
  ),
})).node;

describe('decoder fuzz', () => {
  it.each(names)('%s: arbitrary bytes', (name) => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => void outcome(() => decodeBody(decoder(name), Buffer.from(bytes), context))), RUNS);
  });

  it.each(names)('%s: JSON shaped like the API’s, with anything in the fields', (name) => {
    fc.assert(
      fc.property(near, (json) => {
        const result = outcome(() => decodeBody(decoder(name), Buffer.from(JSON.stringify(json)), context, 'application/json'));
        expect(['ok', 'refused']).toContain(result);
      }),
      RUNS,
    );
  });
});
