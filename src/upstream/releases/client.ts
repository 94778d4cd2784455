import type { Priority, RequestGate } from '../http/gate.js';
import { FREE_ENDPOINT_CACHE_MS } from '../../config/types.js';
import { systemClock, type Clock as Clock } from '../../lib/clock.js';
import { processRedactor } from '../../lib/redact.js';
import { decodeBody, type Decoded, type JsonDecoder } from '../decode.js';
import { checkBaseUrl } from '../http/base-url.js';
import { UpstreamCaller } from '../http/caller.js';
import { InvalidResponseError, NotFoundError, type RequestContext } from '../http/errors.js';
import type { UpstreamLogger } from '../http/exchange.js';
import type { Transport, TransportResponse } from '../http/transport.js';
import type { UpstreamMetrics } from '../metrics.js';
import {
  decodeAssetsValue,
  decodeReleaseRecord,
  decodeSourceValue,
  decodeTextAssets,
  decodeTextValue,
  decodeVersionValue,
  type ReleaseRecord,
} from './decode.js';
import { answerTime, type FreshnessBasis } from './freshness.js';
import { MAJOR_LINE_PATTERN, matchesMajor, normaliseVersion } from './version.js';

/**
 * Typed client of the Release Lookup API, in either of its two offerings:
 *
 * - `free`: `{baseUrl}/<owner>/<repository>`, no credential, one JSON release record.
 *   The document says every endpoint takes `major` (section 1), though the free endpoint's
 *   query column lists none: the client sends `?major=N` and checks the answer, rejecting
 *   with `MajorUnavailableError` a release from another major line (a service that ignored
 *   the parameter), so a wrong line is never reported as if it matched.
 * - `marketplace`: `{baseUrl}/release?project=..&major=..` with the marketplace key and
 *   host headers; one request gives version, type, date, source and assets.
 */

export type ReleaseMode = 'free' | 'marketplace';

export interface ReleaseClientOptions {
  mode: ReleaseMode;
  baseUrl: string;
  /** Required in marketplace mode. */
  marketplaceKey?: string;
  /** Gateway host for the host header; defaults to the host of `baseUrl`. */
  marketplaceHost?: string;
  headerNames?: { key?: string; host?: string };
  transport: Transport;
  gate: RequestGate;
  metrics?: UpstreamMetrics;
  logger?: UpstreamLogger;
  account?: string;
  clock?: Clock;
}

export interface ReleaseProject {
  /** A bare name (`nginx`), `<owner>/<repository>`, or the URL where the project is hosted. */
  id: string;
  /**
   * Restrict to the latest release of this line: a prefix of the version at a dot boundary,
   * as the service takes it (`4`, `0`, `1.26`).
   */
  major?: string | number;
}

export interface LatestRelease {
  /** Normalised: `v1.2.3` and `nginx-1.2.3` both give `1.2.3`. */
  version: string;
  /** As the service sent it. */
  rawVersion: string;
  type?: string;
  /** As sent, e.g. `2020-12-15 14:41:39+00:00`. */
  tagDate?: string;
  sourceUrl?: string;
  assets?: string[];
  /** When the service computed this answer, at the earliest (see freshness.ts). */
  producedAtMs: number;
  /** What `producedAtMs` rests on: a header, or the free endpoint's 2-hour worst case. */
  freshness: FreshnessBasis;
}

/** The free endpoint's newest release is outside the major line asked for. */
export class MajorUnavailableError extends NotFoundError {
  readonly major: string;
  readonly latestVersion: string;
  constructor(context: RequestContext, major: string, latestVersion: string) {
    super(
      context,
      `the free endpoint answered ${latestVersion}, which is not in major line ${major} (it may ignore major); use marketplace mode to look up an older major line`,
    );
    this.major = major;
    this.latestVersion = latestVersion;
  }
}

export const DEFAULT_MARKETPLACE_HEADERS = { key: 'X-RapidAPI-Key', host: 'X-RapidAPI-Host' } as const;

const FREE_ENDPOINT = '/{owner}/{repository}';
const FREE_VERSION_ENDPOINT = '/{owner}/{repository}?version';
const NAME_PART = /^[A-Za-z0-9_.-]+$/;
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

export class ReleaseClient {
  readonly mode: ReleaseMode;
  private readonly caller: UpstreamCaller;
  private readonly clock: Clock;

  constructor(options: ReleaseClientOptions) {
    if (options.mode !== 'free' && options.mode !== 'marketplace') {
      throw new TypeError(`release mode must be 'free' or 'marketplace', got '${String(options.mode)}'`);
    }
    this.mode = options.mode;
    this.clock = options.clock ?? systemClock;
    const base = checkBaseUrl(options.baseUrl, 'release baseUrl');
    let headers: Record<string, string> = {};
    let secrets: string[] = [];
    if (options.mode === 'marketplace') {
      const key = options.marketplaceKey ?? '';
      if (key.trim() === '') throw new TypeError('marketplace mode needs a marketplaceKey');
      if (/[\r\n]/.test(key)) throw new TypeError('marketplaceKey must not contain line breaks');
      const keyHeader = options.headerNames?.key ?? DEFAULT_MARKETPLACE_HEADERS.key;
      const hostHeader = options.headerNames?.host ?? DEFAULT_MARKETPLACE_HEADERS.host;
      for (const name of [keyHeader, hostHeader]) {
        if (!HEADER_NAME.test(name)) throw new TypeError(`'${name}' is not a valid HTTP header name`);
      }
      headers = { [keyHeader]: key, [hostHeader]: options.marketplaceHost ?? base.host };
      secrets = [key];
    } else if (options.marketplaceKey) {
      secrets = [options.marketplaceKey];
    }
    this.caller = new UpstreamCaller({
      api: 'releases',
      baseUrl: base.text,
      headers,
      secrets,
      transport: options.transport,
      gate: options.gate,
      metrics: options.metrics,
      logger: options.logger,
      account: options.account,
      clock: options.clock,
    });
  }

  /** The latest release of a project, with everything one request can give. */
  async latest(project: ReleaseProject, priority: Priority = 'normal'): Promise<LatestRelease> {
    const major = majorLine(project.major);
    const cacheMs = this.mode === 'free' ? FREE_ENDPOINT_CACHE_MS : 0;
    const finish = (decoded: Decoded<ReleaseRecord>, context: RequestContext, response: TransportResponse): LatestRelease =>
      toLatestRelease(decoded.value, context, answerTime(response.headers, this.clock.now(), cacheMs));
    if (this.mode === 'marketplace') {
      return this.json(priority, '/release', `/release?${this.marketplaceQuery(project)}`, decodeReleaseRecord, finish);
    }
    const context: RequestContext = { api: 'releases', endpoint: FREE_ENDPOINT };
    const query = major === undefined ? '' : `?major=${encodeURIComponent(major)}`;
    const release = await this.json(priority, FREE_ENDPOINT, `/${freeProjectPath(project.id)}${query}`, decodeReleaseRecord, finish);
    if (major !== undefined && !matchesMajor(release.version, major)) {
      throw new MajorUnavailableError(context, major, release.version);
    }
    return release;
  }

  /**
   * Only the version: the free endpoint's `?version` form, or marketplace `/version`
   * (`/text/version` with `text`). Returns `{version, rawVersion}`.
   */
  async version(project: ReleaseProject, options: { text?: boolean } = {}, priority: Priority = 'normal'): Promise<{ version: string; rawVersion: string }> {
    const major = majorLine(project.major);
    if (this.mode === 'free') {
      const context: RequestContext = { api: 'releases', endpoint: FREE_VERSION_ENDPOINT };
      const query = major === undefined ? '' : `&major=${encodeURIComponent(major)}`;
      const found = await this.json(priority, FREE_VERSION_ENDPOINT, `/${freeProjectPath(project.id)}?version${query}`, decodeVersionValue, versionPair);
      if (major !== undefined && !matchesMajor(found.version, major)) {
        throw new MajorUnavailableError(context, major, found.version);
      }
      return found;
    }
    const endpoint = options.text ? '/text/version' : '/version';
    const path = `${endpoint}?${this.marketplaceQuery(project)}`;
    return options.text
      ? this.text(priority, endpoint, path, (body, context) => versionPair({ value: decodeTextValue(body, context, 'version'), dropped: [] }, context))
      : this.json(priority, endpoint, path, decodeVersionValue, versionPair);
  }

  /** Marketplace `/source` (or `/text/source`): the source tarball URL. */
  async source(project: ReleaseProject, options: { text?: boolean } = {}, priority: Priority = 'normal'): Promise<string> {
    majorLine(project.major);
    this.requireMarketplace('source');
    const endpoint = options.text ? '/text/source' : '/source';
    const path = `${endpoint}?${this.marketplaceQuery(project)}`;
    return options.text
      ? this.text(priority, endpoint, path, (body, context) => decodeTextValue(body, context, 'source URL'))
      : this.json(priority, endpoint, path, decodeSourceValue, (decoded) => decoded.value);
  }

  /** Marketplace `/assets` (or `/text/assets`): asset URLs of the latest release. */
  async assets(project: ReleaseProject, options: { text?: boolean } = {}, priority: Priority = 'normal'): Promise<Decoded<string[]>> {
    majorLine(project.major);
    this.requireMarketplace('assets');
    const endpoint = options.text ? '/text/assets' : '/assets';
    const path = `${endpoint}?${this.marketplaceQuery(project)}`;
    const decoded = options.text
      ? await this.text(priority, endpoint, path, (body) => decodeTextAssets(body))
      : await this.json(priority, endpoint, path, decodeAssetsValue, (value) => value);
    return { value: decoded.value, dropped: this.caller.report(endpoint, decoded.dropped) };
  }

  private marketplaceQuery(project: ReleaseProject): string {
    const id = project.id.trim();
    if (id === '') throw new TypeError('release project id must not be empty');
    const line = majorLine(project.major);
    const major = line === undefined ? '' : `&major=${encodeURIComponent(line)}`;
    return `project=${encodeURIComponent(id)}${major}`;
  }

  private requireMarketplace(what: string): void {
    if (this.mode !== 'marketplace') {
      throw new TypeError(`the free release endpoint has no ${what} lookup; use latest(), which returns it when the record has it`);
    }
  }

  /** A JSON request whose answer is decoded, then shaped by `finish`, inside the attempt. */
  private json<T, U>(
    priority: Priority,
    endpoint: string,
    pathAndQuery: string,
    decoder: JsonDecoder<T>,
    finish: (decoded: Decoded<T>, context: RequestContext, response: TransportResponse) => U,
  ): Promise<U> {
    return this.send(priority, endpoint, pathAndQuery, { accept: 'application/json' }, (response, context) =>
      finish(decodeBody(decoder, response.body, context, response.headers['content-type']), context, response),
    );
  }

  private text<T>(priority: Priority, endpoint: string, pathAndQuery: string, decode: (body: Buffer, context: RequestContext) => T): Promise<T> {
    return this.send(priority, endpoint, pathAndQuery, { accept: 'text/plain' }, (response, context) => decode(response.body, context));
  }

  private send<T>(
    priority: Priority,
    endpoint: string,
    pathAndQuery: string,
    extraHeaders: Record<string, string>,
    decode: (response: TransportResponse, context: RequestContext) => T,
  ): Promise<T> {
    return this.caller.send(priority, endpoint, pathAndQuery, extraHeaders, decode);
  }
}

/**
 * `<owner>/<repository>` for the free endpoint, from `owner/repo` or a GitHub URL
 * (`https://github.com/owner/repo.git`, `github.com/owner/repo/releases`). A bare name
 * names no repository and is refused.
 * @example freeProjectPath('https://github.com/nginx/nginx/') // 'nginx/nginx'
 */
export function freeProjectPath(id: string): string {
  const text = id.trim();
  const refuse = (why: string): never => {
    throw new TypeError(`release project '${id}' cannot be looked up on the free endpoint: ${why}`);
  };
  let parts: string[];
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text) || /^(www\.)?github\.com\//i.test(text)) {
    let url: URL;
    try {
      url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`);
    } catch {
      return refuse('it is not a valid URL');
    }
    const host = url.hostname.toLowerCase();
    if (host !== 'github.com' && host !== 'www.github.com') {
      return refuse(`it takes <owner>/<repository> of a GitHub repository, and ${host} is not GitHub; use marketplace mode`);
    }
    parts = url.pathname.split('/').filter((part) => part !== '').slice(0, 2);
    if (parts.length < 2) return refuse('the URL names no <owner>/<repository>');
    parts[1] = (parts[1] ?? '').replace(/\.git$/i, '');
  } else {
    parts = text.split('/');
    if (parts.length === 1) {
      return refuse('it takes <owner>/<repository>, and a bare name names no repository; give owner/repository or use marketplace mode');
    }
    if (parts.length !== 2) return refuse('expected exactly <owner>/<repository>');
  }
  for (const part of parts) {
    if (!NAME_PART.test(part) || part === '.' || part === '..') {
      return refuse(`'${part}' is not a valid owner or repository name`);
    }
  }
  return parts.join('/');
}

function versionPair(decoded: Decoded<string>, context: RequestContext): { version: string; rawVersion: string } {
  return { version: normalised(decoded.value, context), rawVersion: decoded.value };
}

function toLatestRelease(record: ReleaseRecord, context: RequestContext, answered: { producedAtMs: number; basis: FreshnessBasis }): LatestRelease {
  const release: LatestRelease = {
    version: normalised(record.version, context),
    rawVersion: record.version,
    producedAtMs: answered.producedAtMs,
    freshness: answered.basis,
  };
  if (record.type !== undefined) release.type = record.type;
  if (record.tag_date !== undefined) release.tagDate = record.tag_date;
  const sourceUrl = record.source_url ?? (record.source !== undefined && /^https?:\/\//i.test(record.source) ? record.source : undefined);
  if (sourceUrl !== undefined) release.sourceUrl = sourceUrl;
  if (record.assets !== undefined) release.assets = [...record.assets];
  return release;
}

function normalised(raw: string, context: RequestContext): string {
  const version = normaliseVersion(raw);
  if (version === undefined) {
    throw new InvalidResponseError(context, `'${processRedactor.scrub(raw).slice(0, 60)}' is not a version`, ['version: not a version']);
  }
  return version;
}

/** The major line as text, checked: `4`, `0`, `1.26`. */
function majorLine(major: string | number | undefined): string | undefined {
  if (major === undefined) return undefined;
  const text = typeof major === 'number' && Number.isSafeInteger(major) && major >= 0 ? String(major) : typeof major === 'string' ? major.trim() : '';
  if (!MAJOR_LINE_PATTERN.test(text)) {
    throw new RangeError(`major must be a version line such as 4, 0 or 1.26, got ${JSON.stringify(major)}`);
  }
  return text;
}

