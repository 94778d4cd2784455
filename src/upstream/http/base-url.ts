/**
 * Checks an upstream base address: absolute http(s), no credentials, query or fragment.
 * Returns it without a trailing slash, and its host. `what` names it in errors.
 */
export function checkBaseUrl(raw: string, what: string): { text: string; host: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TypeError(`${what} is not an absolute URL: '${raw}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`${what} must use http or https, got '${url.protocol}'`);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new TypeError(`${what} must not carry credentials, a query or a fragment`);
  }
  return { text: `${url.origin}${url.pathname}`.replace(/\/+$/, ''), host: url.host };
}
