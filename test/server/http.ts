import { request, type Agent, type IncomingHttpHeaders } from 'node:http';

export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The body as sent, still compressed when Content-Encoding says so. */
  readonly body: Buffer;
}

/**
 * A plain HTTP request that does not decode anything, so tests see the bytes on the wire. With
 * `pauseAfterReadMs` it reads like a slow scraper: it stops after every read for that long.
 */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; agent?: Agent; pauseAfterReadMs?: number } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers, agent: options.agent }, (res) => {
      const chunks: Buffer[] = [];
      const pause = options.pauseAfterReadMs;
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        if (pause === undefined) return;
        res.pause();
        setTimeout(() => res.resume(), pause);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
