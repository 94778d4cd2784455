import type { Logger } from 'pino';
import type { BudgetEvent } from '../budget/index.js';
import type { Clock } from '../lib/clock.js';
import { EpisodeLog } from '../lib/episodes.js';

type Paused = Extract<BudgetEvent, { type: 'paused' }>;

/**
 * What an account's request budget says, for the log. A pause comes with every 429, so a key
 * that something else spends gave a line per request; pauses are logged as an episode instead:
 * the first with its Retry-After, one line a minute with the count, and one after two quiet
 * minutes. The runtime logs a refused key once, with the reason; the budget's own event would
 * repeat it.
 */
export function budgetEventLogger(log: Logger, clock: Clock): (event: BudgetEvent) => void {
  const pauses = new EpisodeLog<Paused>({
    clock,
    quietIntervalsToEnd: 2,
    write: (line) => {
      const { account, retryAfter, pauseMs, effectiveRatePerSecond } = line.detail;
      if (line.phase === 'start') log.warn({ event: line.detail }, 'request budget: paused (more pauses are summed up once a minute while 429s keep coming)');
      else if (line.phase === 'ongoing') log.warn({ account, pauses: line.count, pausesTotal: line.total, durationSeconds: line.durationSeconds, retryAfter, pauseMs, effectiveRatePerSecond }, `request budget: paused ${line.count} times in the last minute`);
      else log.info({ account, pausesTotal: line.total, durationSeconds: line.durationSeconds }, 'request budget: no pause for two minutes');
    },
  });
  return (event) => {
    if (event.type === 'paused') pauses.note(event.account, 1, event);
    else if (event.type === 'auth_failed') log.debug({ event }, 'request budget: auth_failed');
    else log.warn({ event }, `request budget: ${event.type}`);
  };
}
