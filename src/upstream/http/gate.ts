/**
 * The one door every upstream request goes through. Clients call `run` with a priority
 * and a route template; whoever holds the gate (the request budget) decides when the
 * attempt starts, retries what may be retried, and pauses the whole key on 429.
 */
export type Priority = 'high' | 'normal' | 'bulk';

export interface RequestGate {
  run<T>(priority: Priority, endpoint: string, attempt: (signal: AbortSignal) => Promise<T>): Promise<T>;
}
