import type { Registry } from 'prom-client';
import { validateFamily } from './format.js';
import { gzipWithTail } from './gzip.js';
import type { FamilySamples } from './model.js';
import type { Negotiated } from './negotiate.js';
import { familiesFromRegistry } from './prom-client-bridge.js';
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

/**
 * Self-metrics that can go into the body: valid, and not clashing with a family the store
 * holds (two families of one name would make the whole scrape fail).
 */
async function selfFamilies(store: MetricStore, registry: Registry | undefined): Promise<FamilySamples[]> {
  if (!registry) return [];
  const families = await familiesFromRegistry(registry);
  return families.filter((family) => validateFamily(family) === undefined && !store.hasFamily(family.spec.name));
}

/**
 * The body of one scrape: the store's pre-rendered (and pre-compressed) data part, followed
 * by the self-metrics rendered now (few, and they change on every scrape), and for
 * OpenMetrics `# EOF` last. With gzip, only the small tail is compressed per scrape.
 */
export async function buildScrapeBody(store: MetricStore, registry: Registry | undefined, negotiated: Negotiated): Promise<ScrapeBody> {
  const snapshot = store.snapshot();
  const self = await selfFamilies(store, registry);
  const prefix = negotiated.format === 'openmetrics' ? snapshot.openMetrics : snapshot.text;
  const tail = Buffer.from(negotiated.format === 'openmetrics' ? renderOpenMetrics(self) : renderText(self), 'utf8');
  const chunks = negotiated.gzip ? await gzipWithTail(prefix, tail) : [prefix.raw, tail];
  let length = 0;
  for (const chunk of chunks) length += chunk.length;
  return { chunks, length, generation: snapshot.generation };
}
