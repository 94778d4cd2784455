import type { Request, RequestHandler, Response } from 'express';
import type { Clock } from '../../../src/lib/clock.js';
import { rfc3339Seconds } from './params.js';

/** The three simulator listeners whose requests are counted. */
export type StatsListener = 'monitoring' | 'releases' | 'marketplace';

export interface ClientStats {
  /** Requests that arrived, answered or not. */
  total: number;
  /** Answered requests by HTTP status; `aborted` for those the client gave up on first. */
  by_status: Record<string, number>;
  first_request_at: string;
  first_request_ms: number;
  last_request_at: string;
  last_request_ms: number;
}

/** Per listener, per client: monitoring and marketplace by key (named by account), releases by client address. */
export type SimStats = Record<StatsListener, Record<string, ClientStats>>;

/**
 * Counts requests per listener and client. A client is named, never shown as a raw key:
 * the classifier maps a request to `pro`, `business`, `invalid`, `none`, an address, ...
 */
export class StatsRecorder {
  private readonly clock: Clock;
  private data: SimStats = { monitoring: {}, releases: {}, marketplace: {} };

  constructor(clock: Clock) {
    this.clock = clock;
  }

  middleware(listener: StatsListener, classify: (req: Request) => string): RequestHandler {
    return (req: Request, res: Response, next) => {
      const entry = this.arrived(listener, classify(req));
      let counted = false;
      const count = (status: string): void => {
        if (counted) return;
        counted = true;
        entry.by_status[status] = (entry.by_status[status] ?? 0) + 1;
      };
      res.on('finish', () => count(String(res.statusCode)));
      res.on('close', () => count(res.writableFinished ? String(res.statusCode) : 'aborted'));
      next();
    };
  }

  snapshot(): SimStats {
    return structuredClone(this.data);
  }

  reset(): void {
    this.data = { monitoring: {}, releases: {}, marketplace: {} };
  }

  private arrived(listener: StatsListener, client: string): ClientStats {
    const now = this.clock.now();
    const clients = this.data[listener];
    const at = rfc3339Seconds(now);
    let entry = clients[client];
    if (!entry) {
      entry = { total: 0, by_status: {}, first_request_at: at, first_request_ms: now, last_request_at: at, last_request_ms: now };
      clients[client] = entry;
    }
    entry.total += 1;
    entry.last_request_at = at;
    entry.last_request_ms = now;
    return entry;
  }
}
