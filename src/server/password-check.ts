import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { CompareReply, CompareRequest } from './password-thread.js';
import { startThread } from './thread.js';

/**
 * Basic-auth password checks off the event loop, bounded, and throttled per client address.
 *
 * bcrypt is made to be slow: tens of milliseconds of CPU a check. On the event loop, 16
 * keep-alive connections sending wrong passwords (about 8 a second) took `/-/healthy` from 5 ms
 * to 2 s. Checks now run on their own threads (at most `threads` at once, the rest queued up to
 * `maxQueued`, beyond which a request is told to come back), and each client address may have
 * at most `failureBurst` checks that failed or are under way, regaining one every
 * `failureRefillMs`: past that it gets 429 with Retry-After, without a check. A right password
 * is cached by the caller and never gets here again.
 */

export const PASSWORD_CHECK_DEFAULTS = {
  /** One thread on a machine of two cores or fewer, so the event loop keeps a core; two beyond. */
  threads: Math.min(2, Math.max(1, availableParallelism() - 1)),
  maxQueued: 32,
  failureBurst: 5,
  failureRefillMs: 2_000,
  /** Addresses remembered by the throttle; the ones with nothing to remember go first. */
  maxAddresses: 10_000,
} as const;

interface Pending {
  readonly request: CompareRequest;
  readonly resolve: (ok: boolean) => void;
  readonly reject: (error: Error) => void;
}

/** A small pool of bcrypt threads, started on first use; idle threads do not hold the process open. */
export class PasswordVerifier {
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Pending>();
  private readonly queue: Pending[] = [];
  private started = 0;
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly threads: number = PASSWORD_CHECK_DEFAULTS.threads,
    private readonly maxQueued: number = PASSWORD_CHECK_DEFAULTS.maxQueued,
  ) {}

  /** Checks being made or waiting for a thread. */
  get pending(): number {
    return this.busy.size + this.queue.length;
  }

  /** Resolves with whether `password` matches `hash`; undefined when the queue is full (the caller says "retry"). */
  verify(password: string, hash: string): Promise<boolean> | undefined {
    if (this.closed) return Promise.reject(new Error('the password checks are closed'));
    if (this.queue.length >= this.maxQueued) return undefined;
    return new Promise<boolean>((resolve, reject) => {
      this.queue.push({ request: { id: this.nextId++, password, hash }, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const error = new Error('the password checks are closed');
    for (const pending of this.queue.splice(0)) pending.reject(error);
    for (const pending of this.busy.values()) pending.reject(error);
    this.busy.clear();
    const workers = [...this.idle.splice(0)];
    await Promise.all(workers.map((w) => w.terminate()));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const worker = this.idle.pop() ?? (this.started < this.threads ? this.start() : undefined);
      if (!worker) return;
      const pending = this.queue.shift() as Pending;
      this.busy.set(worker, pending);
      worker.ref();
      worker.postMessage(pending.request);
    }
  }

  private start(): Worker {
    this.started++;
    const worker = startThread(import.meta.url, 'password-thread', 'monapi-password-check');
    worker.unref();
    worker.on('message', (reply: CompareReply) => {
      const pending = this.busy.get(worker);
      this.busy.delete(worker);
      worker.unref();
      if (this.closed) {
        void worker.terminate();
        return;
      }
      this.idle.push(worker);
      if (pending?.request.id === reply.id) pending.resolve(reply.ok);
      this.dispatch();
    });
    const lost = (error: Error) => {
      const pending = this.busy.get(worker);
      this.busy.delete(worker);
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
      this.started--;
      pending?.reject(new Error(`a password-check thread failed: ${error.message}`));
      if (!this.closed) this.dispatch();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => {
      if (this.busy.has(worker) || this.idle.includes(worker)) lost(new Error(`exited with code ${code}`));
    });
    return worker;
  }
}

interface Allowance {
  tokens: number;
  at: number;
}

/**
 * Per client address: how many password checks that failed (or are under way) it may still
 * have. `take` reserves one before a check; `refund` gives it back when the password was right.
 */
export class FailureThrottle {
  private readonly addresses = new Map<string, Allowance>();

  constructor(
    private readonly burst: number = PASSWORD_CHECK_DEFAULTS.failureBurst,
    private readonly refillMs: number = PASSWORD_CHECK_DEFAULTS.failureRefillMs,
    private readonly now: () => number = Date.now,
    private readonly maxAddresses: number = PASSWORD_CHECK_DEFAULTS.maxAddresses,
  ) {}

  /** 0: a check may go ahead (one allowance taken); otherwise milliseconds until one may. */
  take(address: string): number {
    const allowance = this.refilled(address);
    if (allowance.tokens >= 1) {
      allowance.tokens -= 1;
      this.remember(address, allowance);
      return 0;
    }
    return Math.max(1, Math.ceil((1 - allowance.tokens) * this.refillMs));
  }

  refund(address: string): void {
    const allowance = this.refilled(address);
    allowance.tokens = Math.min(this.burst, allowance.tokens + 1);
    if (allowance.tokens >= this.burst) this.addresses.delete(address);
  }

  private refilled(address: string): Allowance {
    const now = this.now();
    const allowance = this.addresses.get(address) ?? { tokens: this.burst, at: now };
    allowance.tokens = Math.min(this.burst, allowance.tokens + Math.max(0, now - allowance.at) / this.refillMs);
    allowance.at = now;
    return allowance;
  }

  private remember(address: string, allowance: Allowance): void {
    this.addresses.delete(address);
    this.addresses.set(address, allowance);
    if (this.addresses.size <= this.maxAddresses) return;
    // The least recently seen goes: a flood of addresses cannot grow the map without bound.
    const oldest = this.addresses.keys().next().value;
    if (oldest !== undefined) this.addresses.delete(oldest);
  }
}

let shared: PasswordVerifier | undefined;

/** The process's password-check threads, shared by every server and every reloaded web configuration. */
export function sharedPasswordVerifier(): PasswordVerifier {
  shared ??= new PasswordVerifier();
  return shared;
}
