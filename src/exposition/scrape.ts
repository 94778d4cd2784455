import type { Registry } from 'prom-client';
import { systemClock, type Clock } from '../lib/clock.js';
import { validateFamily } from './format.js';
import { compressTail, gzipMember, type CompressedTail, type PreparedBody } from './gzip.js';
import type { FamilySamples } from './model.js';
import type { ExpositionFormat, Negotiated } from './negotiate.js';
import { familiesFromRegistry } from './prom-client-bridge.js';
import { yieldToEventLoop } from '../lib/turns.js';
import { renderOpenMetrics } from './render-openmetrics.js';
import { renderText } from './render-text.js';
import type { MetricStore } from './store.js';

export interface ScrapeBody {
  /** Buffers to write in order; together they are the (possibly gzip-encoded) body. */
  readonly chunks: readonly Buffer[];
  readonly length: number;
  /** Generation of the store snapshot the data part came from. */
  readonly generation: number;
}

/** How long scrapes share one rendering of the self-metrics, by default. */
export const DEFAULT_SELF_METRICS_MAX_AGE_MS = 1000;

/**
 * The self-metrics that follow the data in every body, rendered (and compressed) at most
 * once per `maxAgeMs` and format, and shared by the scrapes in between. Rendering them is
 * the only per-scrape work besides writing: a prom-client registry read, a few hundred
 * lines per polled account. Under a burst of scrapes that would be most of the CPU; a
 * Prometheus scraping every 15 s or more always gets a fresh rendering.
 */
export class SelfMetricsCache {
  private readonly cached = new Map<ExpositionFormat, { at: number; tail: Promise<CompressedTail> }>();
  /** One reading of the registry, shared by the formats rendered from it: reading it (every collect callback) costs more than rendering. */
  private collected: { at: number; families: Promise<FamilySamples[]> } | undefined;

  constructor(
    private readonly store: MetricStore,
    private readonly registry: Registry | undefined,
    private readonly maxAgeMs = DEFAULT_SELF_METRICS_MAX_AGE_MS,
    /** The exporter's clock, so a fake or sped-up clock ages the cache as it ages the data. */
    private readonly clock: Clock = systemClock,
  ) {}

  tail(format: ExpositionFormat): Promise<CompressedTail> {
    const now = this.clock.now();
    const entry = this.cached.get(format);
    if (entry && now - entry.at < this.maxAgeMs) return entry.tail;
    // Aged from the reading, not the rendering: a tail is never older than maxAgeMs.
    const { at, families } = this.reading(now);
    const tail = families.then((f) => renderFamilies(f, format));
    this.cached.set(format, { at, tail });
    // A failed rendering must not be served to the next scrapes.
    tail.catch(() => {
      if (this.cached.get(format)?.tail === tail) this.cached.delete(format);
    });
    return tail;
  }

  /**
   * A rendering that nobody else holds, for a caller that hands its bytes on (the serving
   * threads get them moved, not copied): kept in the cache, a tail of megabytes at a million
   * series would wait on this thread for a full collection (docs/scaling.md). Shares the
   * registry reading of `tail`.
   */
  render(format: ExpositionFormat): Promise<CompressedTail> {
    return this.reading(this.clock.now()).families.then((f) => renderFamilies(f, format));
  }

  private reading(now: number): { at: number; families: Promise<FamilySamples[]> } {
    if (!this.collected || now - this.collected.at >= this.maxAgeMs) {
      const families = selfFamilies(this.store, this.registry);
      const collected = { at: now, families };
      this.collected = collected;
      families.catch(() => {
        if (this.collected === collected) this.collected = undefined;
      });
    }
    return this.collected;
  }

  /**
   * Series the self-metrics add to a scrape (sample lines of the text format: a histogram
   * counts each bucket, its sum and its count, as Prometheus stores them), from the rendering
   * scrapes share.
   */
  async series(): Promise<number> {
    const { raw } = await this.tail('text');
    let count = 0;
    let lineStart = 0;
    for (let end = raw.indexOf(NEWLINE); end >= 0; end = raw.indexOf(NEWLINE, lineStart)) {
      if (end > lineStart && raw[lineStart] !== HASH) count++;
      lineStart = end + 1;
    }
    return count;
  }
}

const NEWLINE = 0x0a;
const HASH = 0x23;

/**
 * Self-metrics that can go into the body: valid, and not clashing with a family the store
 * holds (two families of one name would make the whole scrape fail).
 */
async function selfFamilies(store: MetricStore, registry: Registry | undefined): Promise<FamilySamples[]> {
  if (!registry) return [];
  const families = await familiesFromRegistry(registry, { yieldBetweenMetrics: true });
  return families.filter((family) => validateFamily(family) === undefined && !store.hasFamily(family.spec.name));
}

/** The tail of a body: self-metrics, and for OpenMetrics `# EOF` last. */
async function renderSelfMetrics(store: MetricStore, registry: Registry | undefined, format: ExpositionFormat): Promise<CompressedTail> {
  return renderFamilies(await selfFamilies(store, registry), format);
}

async function renderFamilies(self: readonly FamilySamples[], format: ExpositionFormat): Promise<CompressedTail> {
  // Family by family, the event loop free in between (the families come from one registry: no name twice).
  let text = '';
  for (const family of self) {
    text += format === 'openmetrics' ? renderOpenMetrics([family], { eof: false }) : renderText([family]);
    await yieldToEventLoop();
  }
  if (format === 'openmetrics') text += renderOpenMetrics([]);
  // Memory of its own, not a piece of a pool Node shares between small buffers: a serving thread can be given it.
  const raw = Buffer.from(new ArrayBuffer(Buffer.byteLength(text, 'utf8')));
  raw.write(text, 'utf8');
  return compressTail(raw);
}

/**
 * The body of one scrape: the store's pre-rendered (and pre-compressed) data part, followed
 * by the self-metrics. With gzip, nothing is compressed per scrape: the data part's DEFLATE
 * data and the tail's are written one after the other inside one gzip member.
 */
export async function buildScrapeBody(store: MetricStore, self: SelfMetricsCache | Registry | undefined, negotiated: Negotiated): Promise<ScrapeBody> {
  const snapshot = store.snapshot();
  if (!snapshot.bodiesHeld) throw new Error('the exposition bodies are held by the serving threads, not by this thread: /metrics is theirs to serve');
  const tail = self instanceof SelfMetricsCache ? await self.tail(negotiated.format) : await renderSelfMetrics(store, self, negotiated.format);
  return scrapeBodyOf(negotiated.format === 'openmetrics' ? snapshot.openMetrics : snapshot.text, tail, negotiated.gzip, snapshot.generation);
}

/** A data part and a tail as the buffers one scrape writes. */
export function scrapeBodyOf(prefix: PreparedBody, tail: CompressedTail, gzip: boolean, generation: number): ScrapeBody {
  const chunks = gzip ? gzipMember(prefix, tail) : [...prefix.pieces, tail.raw];
  let length = 0;
  for (const chunk of chunks) length += chunk.length;
  return { chunks, length, generation };
}
