import { z } from 'zod';

/**
 * Which list layout and paging the Monitoring API answers with, orthogonal to the shape
 * sets: a shape set decides how each item and each "not shown" body is encoded, a layout
 * decides the envelope around lists and single resources (HAL, JSON:API, a vendor's result
 * wrapper) and whether lists come in pages. docs/simulator.md ("Layouts and pages") has the
 * bodies. Off by default: then every body is the one the simulator has always sent.
 */

export const LAYOUT_ENVELOPES = ['none', 'hal', 'jsonapi', 'envelope'] as const;
export type LayoutEnvelope = (typeof LAYOUT_ENVELOPES)[number];

/** The list endpoints that come in pages when paging is on, by the name used in counts and cursors. */
export const PAGED_LISTS = ['hosts', 'websites', 'alert-rules', 'components', 'metrics'] as const;
export type PagedList = (typeof PAGED_LISTS)[number];

export const PAGED_LIST_PATHS: Readonly<Record<PagedList, string>> = {
  hosts: '/hosts',
  websites: '/websites',
  'alert-rules': '/alerts',
  components: '/hosts/{uuid}/components',
  metrics: '/hosts/{uuid}/metrics',
};

/**
 * How a page announces the next one with no envelope layout, alternating by endpoint. The
 * header lists are those whose body has no room for a cursor (the alt components are a bare
 * list) or whose body the seed shows (`/hosts`).
 */
export const PLAIN_NEXT: Readonly<Record<PagedList, 'link-header' | 'next-cursor'>> = {
  hosts: 'link-header',
  websites: 'next-cursor',
  'alert-rules': 'next-cursor',
  components: 'link-header',
  metrics: 'link-header',
};

export type NextMechanism = 'link-header' | 'next-cursor' | 'hal-links-next' | 'jsonapi-links-next' | 'result-info-page' | 'unpaged';

export const DEFAULT_PAGE_SIZE = 3;
export const MAX_PAGE_SIZE = 500;

export interface LayoutSettings {
  readonly envelope: LayoutEnvelope;
  readonly paged: boolean;
  /** Items per page when the client sends no `per_page`. */
  readonly pageSize: number;
  /** Fault for tests: pages after this one answer 503; null = never. */
  readonly pageFailAfter: number | null;
}

export const LAYOUT_OFF: LayoutSettings = { envelope: 'none', paged: false, pageSize: DEFAULT_PAGE_SIZE, pageFailAfter: null };

/** What `POST /_sim/layout`, `sim.layout.set` and the `layout` option accept; fields not named keep their value. */
export const LayoutUpdate = z.strictObject({
  envelope: z.enum(LAYOUT_ENVELOPES).optional(),
  paged: z.boolean().optional(),
  pageSize: z.number().int().min(1).max(MAX_PAGE_SIZE).optional(),
  pageFailAfter: z.number().int().min(1).nullable().optional(),
});
export type LayoutUpdate = z.infer<typeof LayoutUpdate>;

/** Served and failed (503 by `pageFailAfter`) page requests per account, list and page number. */
export type PageCounts = Record<string, Partial<Record<PagedList, { served: Record<string, number>; failed: Record<string, number> }>>>;

export interface LayoutView extends LayoutSettings {
  /** How each list announces its next page now. */
  next: Record<PagedList, NextMechanism>;
  pages: PageCounts;
}

/** Anything that answers "which layout now?". */
export interface LayoutSource {
  settings(): LayoutSettings;
}

/** The layout at run time: set at start, switched through `/_sim/layout` or `set`; it also counts pages. */
export class LayoutController implements LayoutSource {
  private current: LayoutSettings;
  private counts: PageCounts = {};

  constructor(initial: LayoutSettings = LAYOUT_OFF) {
    this.current = { ...initial };
  }

  settings(): LayoutSettings {
    return { ...this.current };
  }

  /** @throws RangeError naming the field when the update is not valid */
  set(update: LayoutUpdate): void {
    const parsed = LayoutUpdate.safeParse(update);
    if (!parsed.success) throw new RangeError(`invalid layout: ${issues(parsed.error)}`);
    const u = parsed.data;
    this.current = {
      envelope: u.envelope ?? this.current.envelope,
      paged: u.paged ?? this.current.paged,
      pageSize: u.pageSize ?? this.current.pageSize,
      pageFailAfter: u.pageFailAfter === undefined ? this.current.pageFailAfter : u.pageFailAfter,
    };
  }

  /** Layout off: the seed's bodies, no pages. Page counts are kept (they reset with the stats). */
  reset(): void {
    this.current = { ...LAYOUT_OFF };
  }

  next(list: PagedList): NextMechanism {
    if (!this.current.paged) return 'unpaged';
    switch (this.current.envelope) {
      case 'hal':
        return 'hal-links-next';
      case 'jsonapi':
        return 'jsonapi-links-next';
      case 'envelope':
        return 'result-info-page';
      case 'none':
        return PLAIN_NEXT[list];
    }
  }

  view(): LayoutView {
    const next = Object.fromEntries(PAGED_LISTS.map((list) => [list, this.next(list)])) as Record<PagedList, NextMechanism>;
    return { ...this.current, next, pages: this.pages() };
  }

  countPage(account: string, list: PagedList, page: number, outcome: 'served' | 'failed'): void {
    const lists = (this.counts[account] ??= {});
    const entry = (lists[list] ??= { served: {}, failed: {} });
    entry[outcome][String(page)] = (entry[outcome][String(page)] ?? 0) + 1;
  }

  pages(): PageCounts {
    return structuredClone(this.counts);
  }

  resetPages(): void {
    this.counts = {};
  }
}

function issues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length > 0 ? `'${i.path.join('.')}'` : 'layout'}: ${i.message}`).join('; ');
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

/**
 * The `--layout` flag: an envelope (`none`, `hal`, `jsonapi`, `envelope`) and/or `paged`,
 * joined by commas (`hal,paged`). Two envelopes are an error.
 */
export function parseLayoutFlag(raw: string): Parsed<{ envelope?: LayoutEnvelope; paged?: true }> {
  const out: { envelope?: LayoutEnvelope; paged?: true } = {};
  for (const part of raw.split(',').map((p) => p.trim())) {
    if (part === 'paged') {
      out.paged = true;
    } else if ((LAYOUT_ENVELOPES as readonly string[]).includes(part)) {
      if (out.envelope !== undefined && out.envelope !== part) {
        return { ok: false, message: `--layout names two envelopes, '${out.envelope}' and '${part}'; give at most one` };
      }
      out.envelope = part as LayoutEnvelope;
    } else {
      return { ok: false, message: `--layout takes ${LAYOUT_ENVELOPES.join(', ')} and/or paged, joined by commas (hal,paged); got '${part.slice(0, 40)}'` };
    }
  }
  return { ok: true, value: out };
}

/**
 * A layout change from a JSON body or a query string (`?envelope=hal&paged=true&pageSize=2&pageFailAfter=none`);
 * the body wins where both name a field.
 */
export function parseLayoutRequest(query: Record<string, unknown>, body: unknown): Parsed<LayoutUpdate> {
  const input: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(query)) {
    if (typeof raw !== 'string') return { ok: false, message: `layout field '${key}' must be given once` };
    input[key] =
      key === 'paged' ? (raw === 'true' ? true : raw === 'false' ? false : raw)
      : key === 'pageSize' || key === 'pageFailAfter' ? (/^[0-9]+$/.test(raw) ? Number(raw) : key === 'pageFailAfter' && (raw === 'none' || raw === 'null') ? null : raw)
      : raw;
  }
  if (body !== undefined && body !== null && !(typeof body === 'object' && Object.keys(body).length === 0)) {
    if (typeof body !== 'object' || Array.isArray(body)) return { ok: false, message: 'layout settings must be a JSON object' };
    Object.assign(input, body);
  }
  const parsed = LayoutUpdate.safeParse(input);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, message: `invalid layout: ${issues(parsed.error)}` };
}

/** `hal, paged by 3` or `off`, for the start-up lines. */
export function describeLayout(s: LayoutSettings): string {
  if (s.envelope === 'none' && !s.paged) return 'off';
  const parts = [s.envelope === 'none' ? 'no envelope' : s.envelope];
  if (s.paged) parts.push(`paged by ${s.pageSize}${s.pageFailAfter === null ? '' : `, 503 after page ${s.pageFailAfter}`}`);
  return parts.join(', ');
}
