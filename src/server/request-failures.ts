import type { Logger } from 'pino';
import { systemClock, type Clock } from '../lib/clock.js';
import { EpisodeLog } from '../lib/episodes.js';

interface Failure {
  readonly err: unknown;
  readonly path: string;
}

/**
 * Logs requests that failed inside the exporter (500) as one episode, not a line each: a
 * broken collector fails every scrape, and a client can send as many requests as it likes.
 * The first failure is logged whole, then one line a minute with the count and the latest,
 * and one after two minutes without a failure. One key for all paths: paths come from clients.
 */
export function requestFailureLogger(log: Logger | undefined, clock: Clock = systemClock): (err: unknown, path: string) => void {
  if (log === undefined) return () => undefined;
  const failures = new EpisodeLog<Failure>({
    clock,
    quietIntervalsToEnd: 2,
    write: (line) => {
      const { err, path } = line.detail;
      if (line.phase === 'start') log.error({ err, path }, 'request failed (more failures are summed up once a minute)');
      else if (line.phase === 'ongoing') log.error({ failures: line.count, failuresTotal: line.total, durationSeconds: line.durationSeconds, err, path }, `requests still fail: ${line.count} in the last minute, the latest shown`);
      else log.info({ failuresTotal: line.total, durationSeconds: line.durationSeconds }, 'no request failed for two minutes');
    },
  });
  return (err, path) => failures.note('request failed', 1, { err, path });
}
