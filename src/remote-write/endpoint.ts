import type { RemoteWriteConfig } from '../config/types.js';
import type { RemoteWriteEndpoint } from './sender.js';

/** The sender's endpoint from the `remote_write` section; `url` overrides the section's (the backfill's flag). */
export function endpointFromConfig(
  config: RemoteWriteConfig,
  proxy: RemoteWriteEndpoint['proxy'],
  url: string = config.url,
): RemoteWriteEndpoint {
  const authorization = config.authorization;
  return {
    url,
    timeoutMs: config.remoteTimeoutMs,
    headers: config.headers,
    ...(authorization !== undefined && { authorization: () => authorization.reveal() }),
    tls: config.tls,
    proxy,
  };
}
