import type { Request } from 'express';

export type PresentedKey = { ok: true; key: string } | { ok: false; reason: 'missing' | 'malformed' | 'conflicting'; message: string };

/**
 * The API key a request presents: `Authorization: Bearer <key>` or `X-Api-Key: <key>`,
 * which are equivalent. Both may be sent if they agree. Messages never contain the key.
 */
export function presentedKey(req: Request): PresentedKey {
  const authorization = req.get('authorization');
  const apiKeyHeader = req.get('x-api-key');
  let bearer: string | undefined;
  if (authorization !== undefined) {
    const match = /^Bearer +(\S+) *$/i.exec(authorization);
    if (!match?.[1]) {
      return { ok: false, reason: 'malformed', message: "The Authorization header must be 'Bearer <API key>'" };
    }
    bearer = match[1];
  }
  const headerKey = apiKeyHeader?.trim();
  if (bearer !== undefined && headerKey !== undefined && headerKey !== '' && bearer !== headerKey) {
    return { ok: false, reason: 'conflicting', message: 'The Authorization and X-Api-Key headers carry different API keys' };
  }
  const key = bearer ?? (headerKey === '' ? undefined : headerKey);
  if (key === undefined) {
    return {
      ok: false,
      reason: 'missing',
      message: "An API key is required: send 'Authorization: Bearer <API key>' or 'X-Api-Key: <API key>'",
    };
  }
  return { ok: true, key };
}
