import type { Clock } from '../../lib/clock.js';
import type { LatestRelease, ReleaseProject } from './client.js';

/** What the release sources ask of the Release Lookup API. */
export interface ReleaseLookups {
  latest(project: ReleaseProject): Promise<LatestRelease>;
  /** When the answer that `latest` would give now was asked, if it would give a kept one. */
  askedAtMs(project: ReleaseProject): number | undefined;
}

/** `nginx/nginx` with major 1.26 → `nginx/nginx@1.26`; without a major, the id alone. */
export function releaseKey(project: ReleaseProject): string {
  return project.major === undefined ? project.id : `${project.id}@${String(project.major)}`;
}

interface Kept {
  readonly askedAtMs: number;
  readonly answer: Promise<LatestRelease>;
}

/**
 * One lookup per (project, line) however many sources want it: a configured project and a
 * component's version line that are the same key share one request. An answer, or a
 * failure, is kept `reuseMs` (shorter than the time between two runs of the schedule, so a
 * run never takes the previous run's answer for its own), and a lookup under way is joined.
 */
export class SharedReleaseLookups implements ReleaseLookups {
  private readonly kept = new Map<string, Kept>();

  constructor(
    private readonly client: { latest(project: ReleaseProject): Promise<LatestRelease> },
    private readonly clock: Clock,
    private readonly reuseMs: number,
    /** Told the outcome of every lookup that reached the service (`monapi_release_lookups_total`). */
    private readonly onLookup: (outcome: 'success' | 'error') => void = () => undefined,
  ) {}

  latest(project: ReleaseProject): Promise<LatestRelease> {
    const key = releaseKey(project);
    const now = this.clock.now();
    this.sweep(now);
    const kept = this.kept.get(key);
    if (kept !== undefined) return kept.answer;
    const answer = this.client.latest(project);
    this.kept.set(key, { askedAtMs: now, answer });
    answer.then(
      () => this.onLookup('success'),
      // The rejection is the caller's to handle; this only counts it.
      () => this.onLookup('error'),
    );
    return answer;
  }

  askedAtMs(project: ReleaseProject): number | undefined {
    this.sweep(this.clock.now());
    return this.kept.get(releaseKey(project))?.askedAtMs;
  }

  private sweep(now: number): void {
    for (const [key, kept] of this.kept) if (now - kept.askedAtMs >= this.reuseMs) this.kept.delete(key);
  }
}
