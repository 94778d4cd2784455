import { describe, expect, it } from 'vitest';
import { thrownBy } from '../../../test/support/thrown.js';
import { InvalidResponseError, type RequestContext } from '../http/errors.js';
import type { JsonDecoder } from '../tolerant/body.js';
import { decodeAssetsValue, decodeReleaseRecord, decodeSourceValue, decodeTextAssets, decodeTextValue, decodeVersionValue } from './decode.js';

const context: RequestContext = { api: 'releases', endpoint: '/release' };

const thrown = (run: () => unknown) => thrownBy(InvalidResponseError, run);

describe('release record', () => {
  const record = {
    version: '1.27.3',
    type: 'release',
    tag_name: 'release-1.27.3',
    tag_date: '2024-11-26 15:00:00+00:00',
    v_prefix: false,
    source: 'github',
    source_url: 'https://github.com/nginx/nginx/archive/release-1.27.3.tar.gz',
    assets: ['https://x/a.tgz'],
    from: 'https://github.com/nginx/nginx',
  };

  it.each<[string, unknown]>([
    ['as the service builds it, unknown fields ignored', { ...record, stars: 5, assets_with_digests: [{ url: 'https://x/a.tgz', name: 'a.tgz' }] }],
    ['wrapped under release', { release: record }],
    ['wrapped under data', { data: record }],
  ])('reads a record %s', (_name, raw) => {
    expect(decodeReleaseRecord(raw, context).value).toEqual(record);
  });

  it('takes the asset URLs of assets_with_digests when there is no assets list', () => {
    expect(decodeReleaseRecord({ version: '1', assets_with_digests: [{ url: 'https://x/b', name: 'b', size: 1 }] }, context).value.assets).toEqual(['https://x/b']);
  });

  it('needs only the version', () => {
    expect(decodeReleaseRecord({ version: '1' }, context).value).toEqual({ version: '1' });
  });

  it('refuses a record without a version', () => {
    expect(thrown(() => decodeReleaseRecord({ type: 'release' }, context)).message).toContain('release record: version: is missing');
  });
});

describe('marketplace /version, /source, /assets and the free ?version form', () => {
  it.each<[string, JsonDecoder<unknown>, unknown, unknown]>([
    ['version: a bare string', decodeVersionValue, '6.12', '6.12'],
    ['version: {version}', decodeVersionValue, { version: 'v2.0', type: 'release' }, 'v2.0'],
    ['version: {latest_version}', decodeVersionValue, { latest_version: '6.12' }, '6.12'],
    ['version: {data: {version}}', decodeVersionValue, { data: { version: '4.20' } }, '4.20'],
    ['source: a bare URL', decodeSourceValue, 'https://x/src.tgz', 'https://x/src.tgz'],
    ['source: {source} when a URL', decodeSourceValue, { source: 'https://x/src.tgz' }, 'https://x/src.tgz'],
    ['source: {source_url}, beside the code host id', decodeSourceValue, { source: 'github', source_url: 'https://x/s2.tgz' }, 'https://x/s2.tgz'],
    ['source: {url}', decodeSourceValue, { url: 'https://x/s3.tgz' }, 'https://x/s3.tgz'],
    ['source: {tarball_url} under data', decodeSourceValue, { data: { tarball_url: 'https://x/s4.tgz' } }, 'https://x/s4.tgz'],
    ['assets: {assets}', decodeAssetsValue, { assets: ['https://x/a', 'https://x/b'] }, ['https://x/a', 'https://x/b']],
    ['assets: a bare list', decodeAssetsValue, ['https://x/a'], ['https://x/a']],
    ['assets: objects with url', decodeAssetsValue, { assets_with_digests: [{ url: 'https://x/a', name: 'a', digest: 'sha256:0' }] }, ['https://x/a']],
    ['assets: an empty list', decodeAssetsValue, { assets: [] }, []],
  ])('reads %s', (_name, decoder, raw, expected) => {
    expect(decoder(raw, context).value).toEqual(expected);
  });

  it.each<[string, JsonDecoder<unknown>, unknown]>([
    ['version: empty', decodeVersionValue, ''],
    ['version: an unknown key', decodeVersionValue, { v: '1' }],
    ['version: a JSON number (6.10 would read 6.1)', decodeVersionValue, 6.1],
    ['version: null', decodeVersionValue, null],
    ['source: the code host id only', decodeSourceValue, { source: 'github' }],
    ['source: not a URL', decodeSourceValue, 'x'],
    ['assets: a string', decodeAssetsValue, { assets: 'https://x/a' }],
  ])('refuses %s', (_name, decoder, raw) => {
    expect(thrown(() => decoder(raw, context)).kind).toBe('invalid_response');
  });

  it('drops asset entries that are not http(s) URLs and keeps the rest', () => {
    const { value, dropped } = decodeAssetsValue({ assets: ['https://x/a', 'ftp://x/b', { name: 'c' }] }, context);
    expect(value).toEqual(['https://x/a']);
    expect(dropped.map((d) => [d.path, d.reason])).toEqual([
      ['assets[1]', 'invalid_value'],
      ['assets[2]', 'invalid_value'],
    ]);
  });
});

describe('text forms', () => {
  it.each([
    ['6.12\n', '6.12'],
    ['  4.20  \r\n\r\n', '4.20'],
  ])('reads a text value %j', (text, expected) => {
    expect(decodeTextValue(Buffer.from(text), context, 'version')).toBe(expected);
  });

  it.each([[''], ['\n \n'], ['1.0\n2.0\n'], ['<html>Service Unavailable</html> page'], ['x'.repeat(600)]])('refuses the text value %j', (text) => {
    expect(thrown(() => decodeTextValue(Buffer.from(text), context, 'version')).message).toContain('single version');
  });

  it('reads text assets one URL a line, ignoring blanks and dropping non-URLs', () => {
    const body = Buffer.from('https://x/a.tgz\r\n\n  https://x/b.zip  \nnot a url\n\n');
    expect(decodeTextAssets(body)).toEqual({
      value: ['https://x/a.tgz', 'https://x/b.zip'],
      dropped: [{ path: 'assets[2]', reason: 'invalid_value', field: 'url', issue: 'not an http(s) URL' }],
    });
  });
});
