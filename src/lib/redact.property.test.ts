import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MIN_PARTIAL_LENGTH, Redactor } from './redact.js';

/**
 * Whatever a secret holds (quotes, backslashes, `$`, spaces, letters beyond ASCII) and however
 * it was escaped, encoded, re-cased or cut on its way into a text, the scrubbed text holds none
 * of it: not the form it came in, nor (cut) the 6 or more characters a cut left of that form.
 */

const CHARACTERS = [...'abcdefXYZ0189-_./+=:@ ', '"', "'", '\\', '$', '`', '&', '<', '%', '\n', '\t', 'é', 'Ü', '€', 'ß', '日', '😀'];
const secretArb = fc
  .array(fc.constantFrom(...CHARACTERS), { minLength: 8, maxLength: 28 })
  .map((chars) => chars.join(''))
  .filter((secret) => secret.trim() === secret && [...secret].filter((c) => /[A-Za-z0-9]/.test(c)).length >= 3);

const swapCase = (text: string) => [...text].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');
const json = (text: string) => JSON.stringify(text).slice(1, -1);

/** Case changes a text may go through first. */
const CASES: Record<string, (text: string) => string> = {
  as: (t) => t,
  lower: (t) => t.toLowerCase(),
  upper: (t) => t.toUpperCase(),
  swapped: swapCase,
};

/** Escapings and encodings; each gives the text the secret becomes. */
const ENCODINGS: Record<string, (text: string) => string> = {
  raw: (t) => t,
  json,
  'json twice': (t) => json(json(t)),
  'json, ASCII only': (t) => json(t).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
  'yaml single-quoted': (t) => t.replace(/'/g, "''"),
  'shell single-quoted': (t) => t.replace(/'/g, "'\\''"),
  'shell double-quoted': (t) => t.replace(/[\\"$`]/g, '\\$&'),
  'shell backslashes': (t) => t.replace(/[^A-Za-z0-9_\-.,:/@%+=]/g, '\\$&'),
  'url encoded': (t) => encodeURIComponent(t),
  'url encoded twice': (t) => encodeURIComponent(encodeURIComponent(t)),
  'form encoded': (t) => encodeURIComponent(t).replace(/%20/g, '+'),
  html: (t) => t.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`),
  base64: (t) => Buffer.from(t).toString('base64'),
  base64url: (t) => Buffer.from(t).toString('base64url'),
  hex: (t) => Buffer.from(t).toString('hex'),
  'hex, upper case': (t) => Buffer.from(t).toString('hex').toUpperCase(),
};

/** What comes before the secret in the text: where it sits (a JSON log line, a header, a YAML value). */
const OPENINGS = ['', 'HTTP 401: Bearer ', '{"level":"warn","reason":"', "password: '", 'key=', '<li>'];

/** How a text may end after the cut: nothing, an ellipsis, a closing quote, a new line. */
const ENDINGS = ['', '…', '...', '"', '"}', '\n', ' (cut)'];

/** Longest run of `form`'s first characters found in `text`. */
function leftOf(form: string, text: string): number {
  let n = Math.min(form.length, text.length);
  while (n > 0 && !text.includes(form.slice(0, n))) n--;
  return n;
}

describe('Redactor, property', () => {
  it('leaves nothing of a secret, however escaped, encoded, re-cased or cut', () => {
    fc.assert(
      fc.property(
        secretArb,
        fc.constantFrom(...Object.keys(CASES)),
        fc.constantFrom(...Object.keys(ENCODINGS)),
        fc.option(fc.integer({ min: MIN_PARTIAL_LENGTH, max: 200 }), { nil: undefined }),
        fc.constantFrom(...ENDINGS),
        fc.constantFrom(...OPENINGS),
        // Not a character any form of a secret here can start with, so what is left of one cannot come from it.
        fc.stringMatching(/^[GHIJK()!?;#]{0,12}$/),
        (secret, casing, encoding, cutAt, ending, opening, before) => {
          const redactor = new Redactor();
          redactor.add(secret);
          const form = (ENCODINGS[encoding] as (t: string) => string)((CASES[casing] as (t: string) => string)(secret));
          const shown = cutAt === undefined || cutAt >= form.length ? form : form.slice(0, cutAt);
          const text = `${before}${opening}${shown}${ending}`;
          const scrubbed = redactor.scrub(text);
          expect(scrubbed).not.toBe(text);
          // Nothing of the encoded secret beyond what chance gives: fewer than the 6 characters a cut must leave to be found.
          expect(leftOf(shown, scrubbed)).toBeLessThan(MIN_PARTIAL_LENGTH);
          expect(scrubbed.includes(secret)).toBe(false);
        },
      ),
      { numRuns: 3_000 },
    );
  }, 60_000);
});
