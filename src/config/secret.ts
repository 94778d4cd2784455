import { inspect } from 'node:util';
import { processRedactor } from '../lib/redact.js';

const REDACTED = '<redacted>';

/**
 * An API key that cannot leak by accident: JSON, `String()`, template literals,
 * `util.inspect` (console.log, pino, vitest diffs) all show `<redacted>`. The value sits in
 * a private field, which no serialiser can enumerate. Only `reveal()` gives it, at the
 * one place that builds the request header. Made, it teaches the process's redactor its value,
 * so every text the exporter shows is scrubbed of it whichever way the value came in.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
    processRedactor.add(value);
  }

  reveal(): string {
    return this.#value;
  }

  /** Compares without revealing, e.g. to find two accounts that share one key. */
  equals(other: Secret): boolean {
    return this.#value === other.#value;
  }

  toJSON(): string {
    return REDACTED;
  }

  toString(): string {
    return REDACTED;
  }

  [Symbol.toPrimitive](): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return `Secret(${REDACTED})`;
  }
}
