import type { z } from 'zod';
import { FakeClock } from '../../src/lib/clock.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../simulator/index.js';

/** A simulator on free ports and a FakeClock; rate limits high unless the test is about them. */
export async function startTestSimulator(options: SimulatorOptions = {}): Promise<{ sim: RunningSimulator; clock: FakeClock }> {
  const clock = options.clock instanceof FakeClock ? options.clock : new FakeClock();
  const sim = await startSimulator({
    monitoringPort: 0,
    releasesPort: 0,
    marketplacePort: 0,
    hosts: 12,
    websites: 6,
    rateLimitPerMinute: 1_000_000,
    burst: 1_000_000,
    ...options,
    clock,
  });
  return { sim, clock };
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

/** GET (or another method) with an optional API key in either header form. */
export async function call(
  url: string,
  options: { key?: string; as?: 'bearer' | 'x-api-key'; method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) {
    if (options.as === 'bearer') headers.authorization = `Bearer ${options.key}`;
    else headers['x-api-key'] = options.key;
  }
  const response = await fetch(url, { method: options.method ?? 'GET', headers, ...(options.body !== undefined ? { body: options.body } : {}) });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** Parses with a zod schema and throws a readable error naming every issue. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new Error(`response does not match the schema: ${result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  return result.data;
}

export const RFC3339_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/** One concrete path of each of the twelve endpoints, for a host and a website of the account. */
export function everyEndpoint(uuid: string, websiteId: number): string[] {
  return [
    '/account',
    '/hosts',
    `/hosts/${uuid}`,
    `/hosts/${uuid}/metrics`,
    `/hosts/${uuid}/metrics/series?names=system.cpu.user`,
    `/hosts/${uuid}/metrics/system.cpu.user/latest`,
    `/hosts/${uuid}/components`,
    '/alerts',
    '/alerts/recent',
    '/websites',
    `/websites/${websiteId}`,
    `/websites/${websiteId}/checks`,
  ];
}
