import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { CompareReply, CompareRequest } from './password-thread.js';
import { startThread } from './thread.js';

/**
 * Basic-auth password checks off the event loop, bounded, and throttled per client address.
 *
 * bcrypt is made to be slow: tens of milliseconds of CPU a check. On the event loop, 16
 * keep-alive connections sending wrong passwords (about 8 a second) took `/-/healthy` from 5 ms
 * to 2 s. Checks now run on their own threads (at most `threads` at once).
 *
 * A right password must get in whatever others send: during a flood of wrong passwords the
 * first login of Prometheus after a restart or a rotation got 429, because the per-address
 * throttle and one shared queue of 32 checks came before its password was known. Now:
 *
 * - credentials known to be right (`KnownGoodCredentials`: a keyed hash, compared in constant
 *   time) pass before any throttle or queue;
 * - the queue is split by standing: addresses that logged in before, addresses with no failed
 *   check outstanding, and addresses with failures. A thread takes the best standing first, each
 *   standing holds at most `maxQueued` waiting checks (the first two newest first), and one
 *   address at most `maxPerAddress` checks waiting or running: neither one address nor many
 *   that fail can fill the queue of an address that does not;
 * - each address may have at most `failureBurst` checks that failed, were refused for a full
 *   queue or are under way, regaining one every `failureRefillMs`: past that it gets 429 with
 *   Retry-After, without a check.
 */

export const PASSWORD_CHECK_DEFAULTS = {
  /** One thread on a machine of two cores or fewer, so the event loop keeps a core; two beyond. */
  threads: Math.min(2, Math.max(1, availableParallelism() - 1)),
  /** Waiting checks per standing. */
  maxQueued: 32,
  /** Checks one client address may have waiting or running. */
  maxPerAddress: 2,
  failureBurst: 5,
  failureRefillMs: 2_000,
  /** Addresses remembered by the throttle; the ones with nothing to remember go first. */
  maxAddresses: 10_000,
  /** Right credentials remembered per user: a rotation may leave old and new in use for a while. */
  knownGoodPerUser: 4,
} as const;

/**
 * Where a check waits: 0, an address that logged in before; 1, an address with no failed or
 * refused check outstanding; 2, any other.
 */
export type Standing = 0 | 1 | 2;
const STANDINGS = 3;

export interface VerifyOptions {
  /** The client's address: its checks waiting or running are bounded. */
  readonly address?: string;
  /** Default 1. */
  readonly standing?: Standing;
}

interface Pending {
  readonly request: CompareRequest;
  readonly address: string | undefined;
  readonly resolve: (ok: boolean) => void;
  readonly reject: (error: Error) => void;
}

/** A waiting check pushed out by a newer one of its standing: the client is told to retry. */
export class CheckShedError extends Error {
  constructor() {
    super('the password check was pushed out of a full queue');
    this.name = 'CheckShedError';
  }
}

/** A small pool of bcrypt threads, started on first use; idle threads do not hold the process open. */
export class PasswordVerifier {
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Pending>();
  private readonly queues: Pending[][] = Array.from({ length: STANDINGS }, () => []);
  private readonly perAddress = new Map<string, number>();
  private started = 0;
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly threads: number = PASSWORD_CHECK_DEFAULTS.threads,
    private readonly maxQueued: number = PASSWORD_CHECK_DEFAULTS.maxQueued,
    private readonly maxPerAddress: number = PASSWORD_CHECK_DEFAULTS.maxPerAddress,
  ) {}

  /** Checks being made or waiting for a thread. */
  get pending(): number {
    return this.busy.size + this.queues.reduce((n, queue) => n + queue.length, 0);
  }

  /**
   * Resolves with whether `password` matches `hash`; undefined when the check cannot wait (its
   * address has `maxPerAddress` checks already, or it has failures and their queue is full):
   * the caller says "retry". An address without failures is served newest first, and pushes
   * the oldest waiting check of its standing out when that queue is full (it rejects with
   * `CheckShedError`): after a restart every address of a flood is one without failures until
   * its first check, and Prometheus' login must not wait behind all of them.
   */
  verify(password: string, hash: string, options: VerifyOptions = {}): Promise<boolean> | undefined {
    if (this.closed) return Promise.reject(new Error('the password checks are closed'));
    const standing = options.standing ?? 1;
    const queue = this.queues[standing] as Pending[];
    const { address } = options;
    if (address !== undefined && (this.perAddress.get(address) ?? 0) >= this.maxPerAddress) return undefined;
    if (queue.length >= this.maxQueued) {
      if (standing === 2) return undefined;
      // Newest first: the oldest waits at the front of the array, pushed out first.
      queue.shift()?.reject(new CheckShedError());
    }
    if (address !== undefined) this.perAddress.set(address, (this.perAddress.get(address) ?? 0) + 1);
    return new Promise<boolean>((resolve, reject) => {
      const done = () => this.release(address);
      queue.push({
        request: { id: this.nextId++, password, hash },
        address,
        resolve: (ok) => {
          done();
          resolve(ok);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const error = new Error('the password checks are closed');
    for (const queue of this.queues) for (const pending of queue.splice(0)) pending.reject(error);
    for (const pending of this.busy.values()) pending.reject(error);
    this.busy.clear();
    const workers = [...this.idle.splice(0)];
    await Promise.all(workers.map((w) => w.terminate()));
  }

  private release(address: string | undefined): void {
    if (address === undefined) return;
    const left = (this.perAddress.get(address) ?? 1) - 1;
    if (left <= 0) this.perAddress.delete(address);
    else this.perAddress.set(address, left);
  }

  private next(): Pending | undefined {
    for (const [standing, queue] of this.queues.entries()) if (queue.length > 0) return standing === 2 ? queue.shift() : queue.pop();
    return undefined;
  }

  private dispatch(): void {
    while (this.queues.some((queue) => queue.length > 0)) {
      const worker = this.idle.pop() ?? (this.started < this.threads ? this.start() : undefined);
      if (!worker) return;
      const pending = this.next() as Pending;
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
  /** Addresses that logged in, least recent first. */
  private readonly good = new Set<string>();

  constructor(
    private readonly burst: number = PASSWORD_CHECK_DEFAULTS.failureBurst,
    private readonly refillMs: number = PASSWORD_CHECK_DEFAULTS.failureRefillMs,
    private readonly now: () => number = Date.now,
    private readonly maxAddresses: number = PASSWORD_CHECK_DEFAULTS.maxAddresses,
  ) {}

  /**
   * Where a check of `address` waits (see `Standing`); read before `take`. An address that
   * logged in keeps its standing through failures (Prometheus sending the old password once after
   * a rotation): the throttle still bounds it to one check every `refillMs` past its burst.
   */
  standing(address: string): Standing {
    if (this.good.has(address)) return 0;
    const allowance = this.addresses.get(address);
    return allowance === undefined || this.refilled(address).tokens >= this.burst ? 1 : 2;
  }

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

  /**
   * The check found the password right: the allowance `take` took comes back, and the address is
   * known from then on as one that logs in. A check refused for a full queue is not refunded:
   * an address told to retry has failures outstanding until its allowance refills, so the
   * addresses of a flood leave the queue of those without failures after their first try.
   */
  refund(address: string): void {
    const allowance = this.refilled(address);
    allowance.tokens = Math.min(this.burst, allowance.tokens + 1);
    if (allowance.tokens >= this.burst) this.addresses.delete(address);
    this.good.delete(address);
    this.good.add(address);
    if (this.good.size > this.maxAddresses) this.good.delete(this.good.values().next().value ?? '');
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

/**
 * Credentials found right, kept as HMAC-SHA256 digests under a key made at start, so neither a
 * password nor an unsalted hash of one sits in memory, and compared in constant time. A digest
 * covers the user, the password and the user's bcrypt hash: a rotated hash matches none of the
 * old entries, so the store can outlive a reload of the web configuration.
 */
export class KnownGoodCredentials {
  private readonly key = randomBytes(32);
  private readonly byUser = new Map<string, Buffer[]>();

  constructor(private readonly perUser: number = PASSWORD_CHECK_DEFAULTS.knownGoodPerUser) {}

  digest(user: string, password: string, hash: string): Buffer {
    return createHmac('sha256', this.key).update(user).update('\u0000').update(password).update('\u0000').update(hash).digest();
  }

  /** Whether `digest` is one of `user`'s; every entry is compared, whichever matches. */
  has(user: string, digest: Buffer): boolean {
    let found = false;
    for (const known of this.byUser.get(user) ?? []) found = timingSafeEqual(known, digest) || found;
    return found;
  }

  add(user: string, digest: Buffer): void {
    if (this.has(user, digest)) return;
    const list = this.byUser.get(user) ?? [];
    list.push(digest);
    if (list.length > this.perUser) list.shift();
    this.byUser.set(user, list);
  }
}

let shared: PasswordVerifier | undefined;

/** The process's password-check threads, shared by every server and every reloaded web configuration. */
export function sharedPasswordVerifier(): PasswordVerifier {
  shared ??= new PasswordVerifier();
  return shared;
}
