import type { LateDataSettings } from '../late-data.js';
import { hash2, hash3, unit } from './hash.js';

/**
 * When an agent reports and when its data becomes readable. Times are whole minutes
 * (`m` = minutes since the epoch; minute m covers [m·60 s, m·60 s + 60 s)).
 *
 * - The agent sends each minute's samples at the end of the minute; the service shows
 *   them `lagMs` (30-100 s, per host) after that: minute m is readable from
 *   (m + 1)·60 s + lag.
 * - Outages follow a fixed grid so no history has to be scanned: a "quiet" host may go
 *   silent for 2-8 h inside each 12-hour slot; a "flappy" host for 2-7 minutes inside
 *   some hours. A host is one or the other or neither, so its outages never overlap.
 * - While silent the agent buffers; when it comes back at minute e it flushes the newest
 *   BUFFER_MINUTES of the outage, readable from e·60 s + lag. Older minutes stay null.
 * - A missed report (about 0.2 % of minutes) is lost for good.
 * - In the late-data mode (late-data.ts) a share of the other minutes arrives late, by up
 *   to 2 hours, and a share never arrives.
 */

export const MINUTE_MS = 60_000;
export const BUFFER_MINUTES = 120;
export const ONLINE_WINDOW_MS = 3 * MINUTE_MS;
const QUIET_SLOT_MINUTES = 12 * 60;
const QUIET_PROBABILITY = 0.5;
const FLAP_PROBABILITY = 0.1;
const LOST_REPORT_PROBABILITY = 0.002;

export type AgentBehaviour = 'steady' | 'quiet' | 'flappy';

export interface AgentSchedule {
  readonly key: number;
  readonly behaviour: AgentBehaviour;
  readonly lagMs: number;
  /** First minute with data: the first whole minute after the host was created. */
  readonly firstMinute: number;
  /** Set in the late-data mode. */
  readonly late?: LateDataSettings;
}

export interface Outage {
  readonly start: number;
  /** Exclusive: the minute the agent reports again. */
  readonly end: number;
}

export function outageAt(agent: AgentSchedule, minute: number): Outage | undefined {
  if (agent.behaviour === 'quiet') {
    const slot = Math.floor(minute / QUIET_SLOT_MINUTES);
    const h = hash3(agent.key, 0x71e7, slot);
    if (unit(h) >= QUIET_PROBABILITY) return undefined;
    const length = 120 + (hash2(h, 1) % 361);
    const start = slot * QUIET_SLOT_MINUTES + (hash2(h, 2) % (QUIET_SLOT_MINUTES - length));
    return minute >= start && minute < start + length ? { start, end: start + length } : undefined;
  }
  if (agent.behaviour === 'flappy') {
    const slot = Math.floor(minute / 60);
    const h = hash3(agent.key, 0xf1a9, slot);
    if (unit(h) >= FLAP_PROBABILITY) return undefined;
    const length = 2 + (hash2(h, 1) % 6);
    const start = slot * 60 + (hash2(h, 2) % (60 - length));
    return minute >= start && minute < start + length ? { start, end: start + length } : undefined;
  }
  return undefined;
}

export function isLostReport(agent: AgentSchedule, minute: number): boolean {
  return unit(hash3(agent.key, 0x1057, minute)) < LOST_REPORT_PROBABILITY;
}

/** When minute `minute` of this agent becomes readable, or Infinity if never. */
export function readableFromMs(agent: AgentSchedule, minute: number): number {
  if (minute < agent.firstMinute || isLostReport(agent, minute)) return Infinity;
  const outage = outageAt(agent, minute);
  if (outage) return minute < outage.end - BUFFER_MINUTES ? Infinity : outage.end * MINUTE_MS + agent.lagMs;
  const onTime = (minute + 1) * MINUTE_MS + agent.lagMs;
  if (!agent.late) return onTime;
  const h = hash3(agent.key, 0x1a7e, minute);
  const roll = unit(h);
  if (roll < agent.late.neverShare) return Infinity;
  if (roll >= agent.late.neverShare + agent.late.lateShare) return onTime;
  // Late by a whole number of seconds from one minute up to the maximum.
  const spanSeconds = agent.late.maxLatenessMinutes * 60 - 60;
  return onTime + (60 + Math.floor(unit(hash2(h, 1)) * (spanSeconds + 1))) * 1000;
}

/**
 * Arrival time of the agent's newest report at `nowMs` (the report for minute m arrives at
 * (m + 1)·60 s + lag; a returning agent's flush arrives when minute end-1's report would
 * have), or `createdAtMs` when it has not reported yet.
 */
export function lastSeenMs(agent: AgentSchedule, createdAtMs: number, nowMs: number): number {
  let minute = Math.floor((nowMs - agent.lagMs) / MINUTE_MS) - 1;
  for (;;) {
    if (minute < agent.firstMinute) return Math.min(createdAtMs, nowMs);
    const outage = outageAt(agent, minute);
    if (!outage || minute === outage.end - 1) return (minute + 1) * MINUTE_MS + agent.lagMs;
    minute = outage.start - 1;
  }
}
