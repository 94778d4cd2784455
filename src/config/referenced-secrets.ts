import { resolve as resolvePath } from 'node:path';
import { isMap, isPair, isScalar, isSeq, parseDocument } from 'yaml';
import { processRedactor, type Redactor } from '../lib/redact.js';

/**
 * The secrets a configuration text points at or holds, read tolerantly: whatever the text's
 * mistakes, so that the redactor knows them before any message about the text is written.
 * A configuration that fails to load is exactly the one whose errors might quote a key: a key
 * pasted into the wrong field (`headroom: <key>`), into `api_key_env` or `api_key_file`, or
 * into a field of its own (`api_key: <key>`).
 *
 * - `*_env`: the value of the variable it names; the name itself when it cannot be a
 *   variable's name, or names none that is set and is not written in capitals (a pasted key);
 * - `*_file` of a key (`api_key_file`, `marketplace_key_file`): the file's content; the value
 *   itself when no file can be read there and it does not look like a path;
 * - any other field whose name says credential (`key`, `token`, `secret`, `password`, ...):
 *   its value; header names (`header_names.key`) excepted;
 * - a URL with a password in it: the password.
 */

export interface ReferencedSecretsOptions {
  readonly env: NodeJS.ProcessEnv;
  /** Reads a key file (bounded, refusing special files); failures are ignored. */
  readonly readFile: (path: string) => string;
  readonly baseDir: string;
}

const CREDENTIAL_WORDS = new Set(['key', 'apikey', 'token', 'secret', 'password', 'passwd', 'pass', 'pwd', 'credential', 'credentials', 'bearer', 'auth', 'authorization']);
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const CONVENTIONAL_ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;
/** Fields whose values are names, not secrets, though their keys say "key". */
const NOT_SECRET_PARENTS = new Set(['header_names']);
const NOT_SECRET_KEYS = new Set(['auth_scheme']);

export function secretsReferencedBy(text: string, options: ReferencedSecretsOptions): string[] {
  const found: string[] = [];
  const add = (value: string | undefined) => {
    if (value !== undefined && value.trim() !== '') found.push(value.trim());
  };
  const visit = (node: unknown, key: string | undefined, parent: string | undefined, depth: number): void => {
    // The loader refuses deeper documents anyway; a bound keeps this walk from a stack overflow.
    if (depth > 200) return;
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const name = isScalar(pair.key) ? String(pair.key.value) : undefined;
        visit(pair.value, name, key, depth + 1);
      }
      return;
    }
    if (isSeq(node)) {
      for (const item of node.items) visit(item, key, parent, depth + 1);
      return;
    }
    if (!isScalar(node)) return;
    const value: unknown = node.value;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') take(String(value), key, parent);
  };
  const take = (value: string, key: string | undefined, parent: string | undefined): void => {
    const password = urlPassword(value);
    if (password !== undefined) add(password);
    if (key === undefined) return;
    if (key.endsWith('_env')) {
      const set = ENV_NAME.test(value) ? options.env[value] : undefined;
      if (set !== undefined) add(set);
      if (!ENV_NAME.test(value) || (set === undefined && !CONVENTIONAL_ENV_NAME.test(value))) add(value);
      return;
    }
    if (key.endsWith('_file')) {
      if (!namesCredential(key.slice(0, -'_file'.length))) return;
      try {
        add(options.readFile(resolvePath(options.baseDir, value)));
      } catch {
        if (!/[/\\.]/.test(value)) add(value);
      }
      return;
    }
    if (namesCredential(key) && !NOT_SECRET_KEYS.has(key) && !(parent !== undefined && NOT_SECRET_PARENTS.has(parent))) add(value);
  };
  if (flowDepth(text) > MAX_PARSED_DEPTH) {
    // The YAML parser recurses per level: read such a text line by line instead (the loader refuses it anyway).
    for (const match of text.matchAll(LINE_PAIR)) take(unquote(match[2] ?? ''), match[1], undefined);
    return found;
  }
  try {
    visit(parseDocument(text, { uniqueKeys: false, prettyErrors: false }).contents, undefined, undefined, 0);
  } catch {
    // Whatever was found before the parser gave up is kept.
  }
  return found;
}

/** `api_key`, `apiKey`, `client-secret`, `password`: a word of the key names a credential (`keycloak` does not). */
function namesCredential(key: string): boolean {
  const words = key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().split(/[^a-z0-9]+/);
  return words.some((word) => CREDENTIAL_WORDS.has(word));
}

const MAX_PARSED_DEPTH = 200;
const LINE_PAIR = /^[\s-]*([A-Za-z_][\w.-]*)\s*:[ \t]*([^\s#][^\n#]*)$/gm;

/** The deepest nesting of flow collections (`[`, `{`), brackets inside quotes counted too (an overestimate is harmless). */
function flowDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (const char of text) {
    if (char === '[' || char === '{') deepest = Math.max(deepest, ++depth);
    else if (char === ']' || char === '}') depth = Math.max(0, depth - 1);
  }
  return deepest;
}

function unquote(value: string): string {
  const trimmed = value.trim();
  return /^(["']).*\1$/.test(trimmed) ? trimmed.slice(1, -1) : trimmed;
}

function urlPassword(value: string): string | undefined {
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/]*@/i.test(value)) return undefined;
  try {
    const url = new URL(value);
    return url.password === '' ? undefined : decodeURIComponent(url.password);
  } catch {
    return undefined;
  }
}

/** Teaches the redactor (the process's by default) every secret the configuration text points at. */
export function rememberSecretsOf(text: string, options: ReferencedSecretsOptions, redactor: Redactor = processRedactor): void {
  redactor.add(...secretsReferencedBy(text, options));
}
