import { describe, expect, it } from 'vitest';
import { sampleLines } from '../../../test/support/family-lines.js';
import { InvalidResponseError } from '../../upstream/http/errors.js';
import { decodeApiDescription } from './decode.js';
import { mapApiDescription } from './map.js';

const context = { api: 'monitoring' as const, endpoint: '/openapi.json' };

describe('the API description', () => {
  it.each([
    ['OpenAPI 3.1', { openapi: '3.1.0', info: { title: 'Monitoring REST API', version: '2' }, paths: { '/hosts': {}, '/account': {} } }, '3.1.0', '2', 2],
    ['without info', { openapi: '3.0.3', paths: { '/hosts': {} } }, '3.0.3', '', 1],
    ['without paths', { openapi: '3.0.0', info: { title: 't', version: '2.4' } }, '3.0.0', '2.4', 0],
    ['wrapped in an envelope', { data: { openapi: '3.1.0', info: { version: '2' }, paths: {} } }, '3.1.0', '2', 0],
  ])('%s', (_name, body, openapi, version, paths) => {
    const families = mapApiDescription(decodeApiDescription(body, context).value, 'prod');
    const lines = sampleLines(families);
    const info = lines.find((line) => line.startsWith('monapi_upstream_api_info{'));
    expect(info).toContain(`openapi="${openapi}"`);
    expect(info).toContain(`version="${version}"`);
    expect(info?.endsWith(' 1')).toBe(true);
    expect(lines).toContain(`monapi_upstream_api_paths{account="prod"} ${paths}`);
  });

  it.each([
    ['a list', []],
    ['an object without an OpenAPI version', { info: { version: '2' }, paths: {} }],
  ])('refuses %s, naming what is wrong', (_name, body) => {
    expect(() => decodeApiDescription(body, context)).toThrow(InvalidResponseError);
  });
});
