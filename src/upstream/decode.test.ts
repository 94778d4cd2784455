import { describe, expect, it } from 'vitest';
import { thrownBy } from '../../test/support/thrown.js';
import { monitoringDecoders } from '../../test/support/decoders.js';
import { decodeBody, parseJsonBody, type JsonDecoder } from './decode.js';
import { InvalidResponseError, type RequestContext } from './http/errors.js';

const context: RequestContext = { api: 'monitoring', endpoint: '/test' };

const thrown = (run: () => unknown) => thrownBy(InvalidResponseError, run);

describe('parseJsonBody', () => {
  it('parses JSON', () => {
    expect(parseJsonBody(Buffer.from('{"a":[1]}'), context)).toEqual({ a: [1] });
  });

  it('fails truncated JSON without quoting the body', () => {
    const error = thrown(() => parseJsonBody(Buffer.from('{"hosts":[{"uuid":"secret-looking'), context));
    expect(error.message).toContain('not valid JSON');
    expect(error.message).not.toContain('secret-looking');
  });

  it('fails an HTML page naming its content type', () => {
    const error = thrown(() => parseJsonBody(Buffer.from('<html>Bad gateway</html>'), context, 'text/html; charset=utf-8'));
    expect(error.message).toContain('content-type text/html');
  });

  it('fails an empty body', () => {
    expect(thrown(() => parseJsonBody(Buffer.alloc(0), context)).message).toContain('empty body');
  });
});

const NOT_A_BODY: readonly (readonly [string, unknown])[] = [
  ['a number', 42],
  ['a string', 'Service Unavailable'],
  ['null', null],
  ['true', true],
];

// The latest-value endpoint alone takes a bare number: a value without a time.
const refusals: { name: string; what: string; decoder: JsonDecoder<unknown>; raw: unknown }[] = Object.entries(monitoringDecoders).flatMap(([name, decoder]) =>
  NOT_A_BODY.filter(([what]) => !(name === 'latest' && what === 'a number')).map(([what, raw]) => ({ name, what, decoder, raw })),
);

describe('monitoring decoders', () => {
  it.each(refusals)('$name refuses $what as the whole body, naming the endpoint', ({ decoder, raw }) => {
    const error = thrown(() => decodeBody(decoder, Buffer.from(JSON.stringify(raw)), context));
    expect(error.context).toEqual(context);
    expect(error.kind).toBe('invalid_response');
  });
});
