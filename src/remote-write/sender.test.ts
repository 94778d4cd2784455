import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processRedactor } from '../lib/redact.js';
import { encodeWriteRequest } from './protocol.js';
import { HttpWriteSender, type SendOutcome } from './sender.js';

/**
 * A receiver's refusal is shown with the first line of its body, scrubbed of the configured
 * credentials before it is cut to 512 characters: cut first, a bearer token that straddled the
 * cut kept 14 of its 20 characters in the log.
 */

const TOKEN = 'rwTok3n-6Gf0NnXy7Qp2';
let server: Server;
let url: string;
let body = '';

beforeAll(async () => {
  processRedactor.add(TOKEN);
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(400, { 'content-type': 'text/plain' }).end(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/push`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** How many characters of the token, from its start, `text` still holds. */
function leaked(text: string): number {
  let n = TOKEN.length;
  while (n > 0 && !text.includes(TOKEN.slice(0, n))) n--;
  return n;
}

async function refusal(): Promise<string> {
  const sender = new HttpWriteSender({ url, timeoutMs: 5_000 });
  try {
    const outcome: SendOutcome = await sender.send(encodeWriteRequest([]), new AbortController().signal);
    expect(outcome.kind).toBe('rejected');
    return outcome.kind === 'rejected' ? outcome.reason : '';
  } finally {
    await sender.close();
  }
}

describe('a receiver refusal longer than 512 bytes', () => {
  it.each([6, 14, 19])('scrubs a bearer token that straddles the cut with %d of its characters before it', async (before) => {
    const prefix = 'err: invalid sample; request headers were Authorization: Bearer ';
    body = `${prefix}${'x'.repeat(512 - prefix.length - before)}${TOKEN} and more after it\nsecond line`;
    const reason = await refusal();
    expect(reason.startsWith('HTTP 400: err: invalid sample')).toBe(true);
    expect(leaked(reason)).toBeLessThan(MIN_LEAK_SHOWN);
    // Scrubbed whole, then cut: the cut may fall inside the replacement.
    expect(reason).toContain('[REDAC');
    expect(reason.length).toBeLessThanOrEqual('HTTP 400: '.length + 512 + 1);
    expect(reason).not.toContain('second line');
  });
});

/** Fewer than this many characters of a token say nothing of it (a single letter may match by chance). */
const MIN_LEAK_SHOWN = 2;
