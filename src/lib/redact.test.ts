import { describe, expect, it } from 'vitest';
import { base64Forms, Redactor, REDACTED_TEXT } from './redact.js';

const KEY = 'sk-Live_4f1d0A9e77+x/y';

function redactorOf(...secrets: string[]): Redactor {
  const r = new Redactor();
  r.add(...secrets);
  return r;
}

describe('Redactor', () => {
  const r = redactorOf(KEY);

  it.each([
    ['as written', `key=${KEY} end`],
    ['upper-cased', `KEY=${KEY.toUpperCase()} END`],
    ['lower-cased', `key=${KEY.toLowerCase()}`],
    ['URL-encoded', `https://x.example/upgrade?key=${encodeURIComponent(KEY)}&a=1`],
    ['every character percent-encoded', [...KEY].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('')],
    ['percent-encoded in lower-case hex', [...KEY].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('')],
    ['double URL-encoded', encodeURIComponent(encodeURIComponent(KEY))],
    ['base64', Buffer.from(KEY).toString('base64')],
    ['base64url', Buffer.from(KEY).toString('base64url')],
    ['base64 inside basic auth (offset 1)', `Basic ${Buffer.from(`u:${KEY}`).toString('base64')}`],
    ['base64 at offset 2', Buffer.from(`ab${KEY}tail`).toString('base64')],
    ['base64 at offset 0 inside more', Buffer.from(`abc${KEY}`).toString('base64')],
    ['base64 of the upper-cased key', Buffer.from(KEY.toUpperCase()).toString('base64')],
  ])('finds the key %s', (_label, text) => {
    expect(r.finds(text)).toBe(true);
    const scrubbed = r.scrub(text);
    expect(scrubbed).toContain(REDACTED_TEXT);
    expect(redactorOf(KEY).finds(scrubbed)).toBe(false);
  });

  it('keeps the text around a match, and text without a secret unchanged', () => {
    expect(r.scrub(`before ${KEY} after`)).toBe(`before ${REDACTED_TEXT} after`);
    expect(r.scrub('https://x.example/?a=%41%42')).toBe('https://x.example/?a=%41%42');
    expect(r.scrub('nothing here')).toBe('nothing here');
  });

  it('scrubs a percent-encoded match whole, not only part of its escapes', () => {
    const encoded = [...KEY].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
    expect(r.scrub(`u=${encoded}&b=2`)).toBe(`u=${REDACTED_TEXT}&b=2`);
  });

  it('ignores secrets too short to scrub without taking ordinary words', () => {
    const short = redactorOf('abc', '', '12345');
    expect(short.size).toBe(0);
    expect(short.scrub('abc 12345')).toBe('abc 12345');
  });

  it('scrubs every string of a value, keys too', () => {
    expect(r.scrubValue({ message: `got ${KEY}`, nested: [{ [KEY]: 1 }], n: 3 })).toEqual({ message: `got ${REDACTED_TEXT}`, nested: [{ [REDACTED_TEXT]: 1 }], n: 3 });
  });

  it('finds many secrets at once through its index (more than it looks for one by one)', () => {
    const keys = Array.from({ length: 200 }, (_, i) => `account-key-${i.toString(36).padStart(4, '0')}-${(i * 7919).toString(16)}`);
    const many = redactorOf(...keys);
    const text = `a ${keys[7]} b ${Buffer.from(keys[150] ?? '').toString('base64')} c ${encodeURIComponent((keys[199] ?? '').toUpperCase())}`;
    const scrubbed = many.scrub(text);
    for (const key of [keys[7], keys[150], keys[199]]) expect(redactorOf(key ?? '').finds(scrubbed)).toBe(false);
    expect(scrubbed.split(REDACTED_TEXT)).toHaveLength(4);
  });

  it('cuts base64 forms to the characters that depend on the secret alone', () => {
    for (const form of base64Forms(KEY)) expect(form.length).toBeGreaterThanOrEqual(8);
    expect(base64Forms(KEY)).toContain(Buffer.from(KEY).toString('base64').slice(0, Math.floor((8 * KEY.length) / 6)));
  });

  describe('escaped, encoded and cut forms (issue 28)', () => {
    const PASSWORD = 'pa"ss\\w0rd$ 9x';
    const quoted = redactorOf(PASSWORD);

    it.each([
      ['JSON-escaped, as in a log line', JSON.stringify({ reason: `refused ${PASSWORD}` })],
      ['JSON-escaped twice', JSON.stringify(JSON.stringify({ reason: PASSWORD }))],
      ['in YAML single quotes', `password: '${PASSWORD.replace(/'/g, "''")}'`],
      ['shell-quoted in double quotes', `export P="${PASSWORD.replace(/[\\"$`]/g, '\\$&')}"`],
      ['shell-quoted in single quotes', `export P='${PASSWORD.replace(/'/g, "'\\''")}'`],
      ['HTML-escaped', `<li>${PASSWORD.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)}</li>`],
      ['form-encoded', `p=${encodeURIComponent(PASSWORD).replace(/%20/g, '+')}`],
      ['hex of the upper-cased password', Buffer.from(PASSWORD.toUpperCase()).toString('hex')],
    ])('finds a password with a quote, a backslash, a dollar and a space %s', (_label, text) => {
      const scrubbed = quoted.scrub(text);
      expect(scrubbed).toContain(REDACTED_TEXT);
      expect(scrubbed).not.toContain('w0rd');
    });

    it.each([
      ['hex', (k: string) => Buffer.from(k).toString('hex')],
      ['upper-case hex', (k: string) => Buffer.from(k).toString('hex').toUpperCase()],
      ['base64', (k: string) => Buffer.from(k).toString('base64')],
      ['base64url', (k: string) => Buffer.from(k).toString('base64url')],
    ])('finds the %s of the key with its case swapped', (_label, encode) => {
      const swapped = [...KEY].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');
      // All but the last characters of base64, which depend on what follows the key as much as on it.
      expect(r.scrub(`x ${encode(swapped)} y`)).toMatch(/^x \[REDACTED\][A-Za-z0-9+/=_-]{0,3} y$/);
    });

    it('scrubs what a cut left of a key at the end of a text or of a quoted value, 6 characters or more', () => {
      expect(r.scrub(`Bearer ${KEY.slice(0, 14)}`)).toBe(`Bearer ${REDACTED_TEXT}`);
      expect(r.scrub(`{"reason":"Bearer ${KEY.slice(0, 9)}…","msg":"x"}`)).toBe(`{"reason":"Bearer ${REDACTED_TEXT}…","msg":"x"}`);
      expect(r.scrub(`sample ${Buffer.from(KEY).toString('base64').slice(0, 12)}...`)).toBe(`sample ${REDACTED_TEXT}...`);
      // Five characters say too little to be told from chance; a prefix running on into other words is not a cut.
      expect(r.scrub(`Bearer ${KEY.slice(0, 5)}`)).toBe(`Bearer ${KEY.slice(0, 5)}`);
      expect(r.scrub(`${KEY.slice(0, 8)}and on`)).toBe(`${KEY.slice(0, 8)}and on`);
    });

    it('scrubValue scrubs each string before JSON escapes it', () => {
      const value = { message: `got ${PASSWORD}`, list: [PASSWORD.slice(0, 12)], [PASSWORD]: true };
      const json = JSON.stringify(quoted.scrubValue(value));
      expect(json).not.toContain('w0rd');
      expect(JSON.parse(json)).toEqual({ message: `got ${REDACTED_TEXT}`, list: [REDACTED_TEXT], [REDACTED_TEXT]: true });
    });

    it('knows a PEM key line by line, so a part of it is found too', () => {
      const body = Array.from({ length: 4 }, (_, i) => Buffer.alloc(48, i + 65).toString('base64'));
      const pem = `-----BEGIN PRIVATE KEY-----\n${body.join('\n')}\n-----END PRIVATE KEY-----\n`;
      const keys = redactorOf(pem);
      expect(keys.scrub(`line ${body[2]} leaked`)).toBe(`line ${REDACTED_TEXT} leaked`);
      expect(keys.scrub(JSON.stringify({ key: pem }))).not.toContain(body[0]);
    });
  });
});

