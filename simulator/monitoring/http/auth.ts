import type { Request } from 'express';

export type PresentedKey = { ok: true; key: string } | { ok: false; reason: 'missing' | 'malformed' | 'conflicting'; message: string };

/**
 * The API key a request presents: `Authorization: Bearer <key>` or `X-Api-Key: <key>`,
 * which are equivalent. Both may be sent if they agree. An `Authorization` header that
 * carries no bearer token (`Basic ...`, a proxy's own scheme) is not an API key: with an
 * `X-Api-Key` beside it the request authenticates by that key, alone it is 401.
 * Messages never contain the key.
 */
export function presentedKey(req: Request): PresentedKey {
  const authorization = req.get('authorization');
  const headerKey = req.get('x-api-key')?.trim() || undefined;
  const bearer = authorization === undefined ? undefined : /^Bearer +(\S+) *$/i.exec(authorization)?.[1];
  if (bearer !== undefined && headerKey !== undefined && bearer !== headerKey) {
    return { ok: false, reason: 'conflicting', message: 'The Authorization and X-Api-Key headers carry different API keys' };
  }
  const key = bearer ?? headerKey;
  if (key !== undefined) return { ok: true, key };
  if (authorization !== undefined) {
    return { ok: false, reason: 'malformed', message: "The Authorization header must be 'Bearer <API key>' (or send 'X-Api-Key: <API key>')" };
  }
  return {
    ok: false,
    reason: 'missing',
    message: "An API key is required: send 'Authorization: Bearer <API key>' or 'X-Api-Key: <API key>'",
  };
}
