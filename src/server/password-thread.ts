import bcrypt from 'bcryptjs';
import { parentPort } from 'node:worker_threads';

/**
 * A password-checking thread (see password-check.ts): bcrypt costs tens of milliseconds of
 * CPU per check, which on the event loop delayed every probe and scrape behind a client
 * sending wrong passwords.
 */

export interface CompareRequest {
  readonly id: number;
  readonly password: string;
  readonly hash: string;
}

export interface CompareReply {
  readonly id: number;
  readonly ok: boolean;
}

const port = parentPort;
if (!port) throw new Error('password-thread.ts runs as a worker thread (see password-check.ts)');
port.on('message', (request: CompareRequest) => {
  let ok = false;
  try {
    ok = bcrypt.compareSync(request.password, request.hash);
  } catch {
    ok = false;
  }
  port.postMessage({ id: request.id, ok } satisfies CompareReply);
});
