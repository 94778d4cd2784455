import { createHmac, randomBytes } from 'node:crypto';
import { dirname, resolve as resolvePath } from 'node:path';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { CONFIG_FILE_MAX_BYTES, InputFileError, PEM_FILE_MAX_BYTES, readBoundedFile } from '../config/input.js';
import { processRedactor } from '../lib/redact.js';
import { CheckShedError, FailureThrottle, KnownGoodCredentials, sharedPasswordVerifier, type PasswordVerifier } from './password-check.js';

/**
 * `--web.config.file`, in the format of the Prometheus exporter-toolkit, so the file an
 * operator already has for node_exporter works here:
 *
 * ```yaml
 * tls_server_config:
 *   cert_file: server.crt
 *   key_file: server.key
 *   client_auth_type: RequireAndVerifyClientCert
 *   client_ca_file: ca.crt
 *   min_version: TLS12
 * http_server_config:
 *   headers: { Strict-Transport-Security: max-age=31536000 }
 * basic_auth_users:
 *   prometheus: $2y$10$...   # bcrypt, e.g. htpasswd -nBC 10 prometheus
 * ```
 *
 * Paths are relative to the file's folder. What Node's TLS cannot do as Go's does
 * (`cipher_suites` by Go names, `curve_preferences`, HTTP/2) is refused by name rather than
 * ignored. Everything is checked when the file is read: a bad file stops the start with a
 * message naming the field, and on a re-read keeps the previous configuration.
 */

export const CLIENT_AUTH_TYPES = ['NoClientCert', 'RequestClientCert', 'RequireAnyClientCert', 'VerifyClientCertIfGiven', 'RequireAndVerifyClientCert'] as const;
export type ClientAuthType = (typeof CLIENT_AUTH_TYPES)[number];
const TLS_VERSIONS = { TLS10: 'TLSv1', TLS11: 'TLSv1.1', TLS12: 'TLSv1.2', TLS13: 'TLSv1.3' } as const;

const NOT_SUPPORTED = 'is not supported by this exporter (Node.js TLS uses OpenSSL, whose names and defaults differ from Go\'s); remove it';

const tlsSchema = z
  .object({
    cert_file: z.string().min(1).optional(),
    key_file: z.string().min(1).optional(),
    cert: z.string().optional(),
    key: z.string().optional(),
    client_auth_type: z.enum(CLIENT_AUTH_TYPES).default('NoClientCert'),
    client_ca_file: z.string().min(1).optional(),
    client_allowed_sans: z.array(z.string()).optional(),
    min_version: z.enum(Object.keys(TLS_VERSIONS) as [keyof typeof TLS_VERSIONS]).default('TLS12'),
    max_version: z.enum(Object.keys(TLS_VERSIONS) as [keyof typeof TLS_VERSIONS]).optional(),
    cipher_suites: z.never({ error: `cipher_suites ${NOT_SUPPORTED}` }).optional(),
    curve_preferences: z.never({ error: `curve_preferences ${NOT_SUPPORTED}` }).optional(),
    prefer_server_cipher_suites: z.boolean().optional(),
  })
  .strict();

const webConfigSchema = z
  .object({
    tls_server_config: tlsSchema.optional(),
    http_server_config: z
      .object({
        http2: z.literal(false, { error: `http2 ${NOT_SUPPORTED} (only false is accepted)` }).optional(),
        headers: z.record(z.string(), z.string()).optional(),
      })
      .strict()
      .optional(),
    basic_auth_users: z.record(z.string().min(1), z.string()).optional(),
  })
  .strict();

const BCRYPT = /^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/;
/** Response headers the toolkit lets an operator set. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export interface WebConfig {
  /** Undefined: plain HTTP. */
  readonly tls: WebTls | undefined;
  /** User name to bcrypt hash; empty: no basic auth. */
  readonly users: ReadonlyMap<string, string>;
  readonly headers: Readonly<Record<string, string>>;
  /** The certificate, key and CA files read: a change of any of them is a change of the configuration. */
  readonly files: readonly string[];
}

export interface WebTls {
  /** For `https.createServer` and `setSecureContext`. */
  readonly context: SecureContextOptions;
  readonly clientAuth: ClientAuthType;
  /** When set, a client certificate must name one of these (DNS, IP, e-mail or URI SAN). */
  readonly allowedSans: readonly string[] | undefined;
}

export class WebConfigError extends Error {
  constructor(
    readonly source: string,
    readonly problems: readonly string[],
  ) {
    super(`invalid web configuration ${source}: ${problems.length === 1 ? '1 problem' : `${problems.length} problems`}\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'WebConfigError';
  }
}

/** Reads and checks a web configuration file; throws `WebConfigError`. */
export function loadWebConfig(path: string): WebConfig {
  let text: string;
  try {
    text = readBoundedFile(path, CONFIG_FILE_MAX_BYTES, 'web configuration file');
  } catch (error) {
    throw new WebConfigError(path, [`(file): ${error instanceof InputFileError ? error.reason : String(error)}`]);
  }
  return parseWebConfig(text, dirname(resolvePath(path)), path);
}

export function parseWebConfig(text: string, baseDir: string, source = '(inline)'): WebConfig {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) throw new WebConfigError(source, doc.errors.map((e) => `(yaml): ${e.message.split('\n')[0] ?? e.message}`));
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (error) {
    throw new WebConfigError(source, [`(yaml): ${error instanceof Error ? error.message : String(error)}`]);
  }
  const parsed = webConfigSchema.safeParse(data, {
    error: (issue) => (issue.code === 'unrecognized_keys' ? `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}` : undefined),
  });
  if (!parsed.success) {
    // Never echo a value: basic_auth_users may hold a pasted password.
    throw new WebConfigError(source, parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`));
  }
  const raw = parsed.data;
  const problems: string[] = [];

  const users = new Map<string, string>();
  for (const [user, hash] of Object.entries(raw.basic_auth_users ?? {})) {
    if (!BCRYPT.test(hash)) {
      problems.push(`basic_auth_users.${user}: must be a bcrypt hash ($2y$10$... from htpasswd -nBC 10 ${user}), never the password itself`);
      continue;
    }
    users.set(user, hash);
  }
  const headers = raw.http_server_config?.headers ?? {};
  for (const name of Object.keys(headers)) {
    if (!HEADER_NAME.test(name)) problems.push(`http_server_config.headers: ${JSON.stringify(name)} is not an HTTP header name`);
  }

  let tls: WebTls | undefined;
  const files: string[] = [];
  const t = raw.tls_server_config;
  if (t !== undefined) {
    const read = (field: string, file: string): string | undefined => {
      const path = resolvePath(baseDir, file);
      files.push(path);
      try {
        return readBoundedFile(path, PEM_FILE_MAX_BYTES, field);
      } catch (error) {
        problems.push(`tls_server_config.${field}: ${error instanceof InputFileError ? error.message : String(error)}`);
        return undefined;
      }
    };
    const cert = t.cert ?? (t.cert_file === undefined ? undefined : read('cert_file', t.cert_file));
    const key = t.key ?? (t.key_file === undefined ? undefined : read('key_file', t.key_file));
    // The server's private key is a secret like any key: no text the exporter shows may carry it, whole or a line of it.
    processRedactor.add(key);
    if (t.cert === undefined && t.cert_file === undefined) problems.push('tls_server_config.cert_file: is required with tls_server_config');
    if (t.key === undefined && t.key_file === undefined) problems.push('tls_server_config.key_file: is required with tls_server_config');
    const needsCa = t.client_auth_type === 'VerifyClientCertIfGiven' || t.client_auth_type === 'RequireAndVerifyClientCert';
    if (needsCa && t.client_ca_file === undefined) problems.push(`tls_server_config.client_ca_file: is required with client_auth_type ${t.client_auth_type}`);
    if (!needsCa && t.client_ca_file !== undefined && t.client_auth_type === 'NoClientCert') {
      problems.push('tls_server_config.client_auth_type: is NoClientCert, so client_ca_file would not be used; set RequireAndVerifyClientCert or VerifyClientCertIfGiven');
    }
    const ca = t.client_ca_file === undefined ? undefined : read('client_ca_file', t.client_ca_file);
    const minVersion = TLS_VERSIONS[t.min_version];
    const maxVersion = t.max_version === undefined ? undefined : TLS_VERSIONS[t.max_version];
    if (maxVersion !== undefined && Number(t.max_version?.slice(3)) < Number(t.min_version.slice(3))) problems.push('tls_server_config.max_version: is below min_version');
    if (cert !== undefined && key !== undefined && problems.length === 0) {
      const context: SecureContextOptions = { cert, key, minVersion, ...(maxVersion && { maxVersion }), ...(ca !== undefined && { ca }), ...(t.prefer_server_cipher_suites !== false && { honorCipherOrder: true }) };
      try {
        createSecureContext(context);
        tls = { context, clientAuth: t.client_auth_type, allowedSans: t.client_allowed_sans };
      } catch (error) {
        // OpenSSL's words, e.g. "key values mismatch" or "no start line": never the key itself.
        const why = error instanceof Error ? error.message.split('\n')[0] : String(error);
        problems.push(`tls_server_config: the certificate, key and client CA cannot be used together: ${why}`);
      }
    }
  }
  if (problems.length > 0) throw new WebConfigError(source, problems);
  return { tls, users, headers, files };
}

/** `ok`; `denied` (401); or `retryAfterSeconds` (429): too many failed checks from the address, or too many checks waiting. */
export type AuthOutcome = 'ok' | 'denied' | { readonly retryAfterSeconds: number };

/**
 * The slow part of a basic-auth check, for credentials not known to be right: the per-address
 * throttle, then bcrypt off the event loop. One per process: serving threads pass their checks
 * to the main thread's (serving-threads.ts), so a flood spread over N threads by SO_REUSEPORT
 * meets one throttle and one queue, not N.
 */
export interface PasswordGate {
  /** `hash` undefined: an unknown user, checked against a throw-away hash all the same. */
  check(password: string, hash: string | undefined, address: string): Promise<AuthOutcome>;
}

/**
 * The gate itself. Identical credentials checked at once share one bcrypt: Prometheus'
 * scrapes after a restart cost one check, not one each.
 */
export class ThrottledPasswordGate implements PasswordGate {
  private readonly inFlight = new Map<string, Promise<boolean>>();
  /** Keys `inFlight`, so that no password sits in memory as a map key. */
  private readonly key = randomBytes(32);
  /** bcrypt (cost 10) of a throw-away password: compared against when the user is unknown, so that answer takes as long as a wrong password. */
  private static readonly DUMMY = '$2b$10$6Qrx3JAYHI7d/SYLtm/Di.tIKM55E50ES0jDfxIQU4kRbavU0Y3qG';

  /** Keep the gate across reloads of the web configuration: a rotated password must not wipe the failures of a flood in progress. */
  constructor(
    private readonly verifier: PasswordVerifier = sharedPasswordVerifier(),
    private readonly throttle: FailureThrottle = new FailureThrottle(),
  ) {}

  async check(password: string, hash: string | undefined, address: string): Promise<AuthOutcome> {
    const against = hash ?? ThrottledPasswordGate.DUMMY;
    const standing = this.throttle.standing(address);
    const waitMs = this.throttle.take(address);
    if (waitMs > 0) return { retryAfterSeconds: Math.ceil(waitMs / 1000) };
    const key = createHmac('sha256', this.key).update(password).update('\u0000').update(against).digest('base64');
    // The same credentials already under check: their answer is this one's too, without another bcrypt.
    let settled = this.inFlight.get(key);
    if (settled === undefined) {
      const verifying = this.verifier.verify(password, against, { address, standing });
      if (verifying === undefined) return { retryAfterSeconds: 1 };
      const checked = verifying.finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, checked);
      settled = checked;
    }
    let matched: boolean;
    try {
      matched = await settled;
    } catch (error) {
      if (!(error instanceof CheckShedError)) throw error;
      return { retryAfterSeconds: 1 };
    }
    if (!matched || hash === undefined) return 'denied';
    this.throttle.refund(address);
    return 'ok';
  }
}

/**
 * Checks basic auth as the toolkit does: bcrypt per user, an unknown user costing the same
 * as a wrong password (no user enumeration by timing), and credentials found right remembered
 * so a scrape every 15 s does not pay a bcrypt each time. Known-good credentials pass before
 * any throttle; the others go through the gate (`PasswordGate`): the bcrypt runs off the event
 * loop (password-check.ts), queued by the address's standing, and an address with too many
 * failed checks is told to wait.
 */
export class BasicAuthChecker {
  /** Pass the gate and the known-good store of the previous configuration on a reload: neither is about one file. */
  constructor(
    private readonly users: ReadonlyMap<string, string>,
    private readonly gate: PasswordGate = new ThrottledPasswordGate(),
    private readonly knownGood: KnownGoodCredentials = new KnownGoodCredentials(),
  ) {}

  get enabled(): boolean {
    return this.users.size > 0;
  }

  /** `address`: the client's, whose failed checks are throttled. */
  async check(header: string | undefined, address = 'unknown'): Promise<AuthOutcome> {
    const match = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header?.trim() ?? '');
    if (!match?.[1]) return 'denied';
    const decoded = Buffer.from(match[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return 'denied';
    const user = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    const hash = this.users.get(user);
    if (hash === undefined) return this.gate.check(password, undefined, address);
    const digest = this.knownGood.digest(user, password, hash);
    if (this.knownGood.has(user, digest)) return 'ok';
    const outcome = await this.gate.check(password, hash, address);
    if (outcome === 'ok') this.knownGood.add(user, digest);
    return outcome;
  }
}
