/**
 * The baseline: prom-client holding the same series as the exporter and rendering them on
 * every scrape, the way most Node.js exporters serve /metrics. Reads a text exposition
 * (the exporter's own body), turns every sample line into a gauge sample of the same name
 * and labels (prom-client cannot be given histogram buckets or counter values directly; the
 * rendering cost is the same per line), and serves `register.metrics()` per request, without
 * compression, as prom-client does. Started by bench/scale.ts.
 *
 *   node --expose-gc --import tsx bench/scale/prom-client-process.ts <body.txt>
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Gauge, Registry } from 'prom-client';
import type { PromClientReady } from './protocol.js';

const [bodyFile] = process.argv.slice(2);
if (!bodyFile || !process.send) {
  process.stderr.write('prom-client-process: run by bench/scale.ts with <body.txt> and an IPC channel\n');
  process.exit(2);
}

const gc = (globalThis as { gc?: () => void }).gc;
gc?.();
const heapBefore = process.memoryUsage().heapUsed;
const started = performance.now();

interface Parsed {
  readonly help: string;
  readonly labelNames: Set<string>;
  readonly samples: { labels: Record<string, string>; value: number }[];
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/;
const PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function unescape(value: string): string {
  return value.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
}

const byName = new Map<string, Parsed>();
const helps = new Map<string, string>();
for (const line of readFileSync(bodyFile, 'utf8').split('\n')) {
  if (line.startsWith('# HELP ')) {
    const rest = line.slice(7);
    const space = rest.indexOf(' ');
    helps.set(rest.slice(0, space), rest.slice(space + 1).replace(/\\n/g, '\n').replace(/\\\\/g, '\\'));
    continue;
  }
  const match = LINE.exec(line);
  if (!match) continue;
  const name = match[1] as string;
  let parsed = byName.get(name);
  if (!parsed) {
    const family = [...helps.keys()].findLast((f) => name.startsWith(f)) ?? name;
    parsed = { help: helps.get(family) || name, labelNames: new Set(), samples: [] };
    byName.set(name, parsed);
  }
  const labels: Record<string, string> = {};
  for (const pair of (match[2] ?? '').matchAll(PAIR)) {
    labels[pair[1] as string] = unescape(pair[2] as string);
    parsed.labelNames.add(pair[1] as string);
  }
  const raw = match[3] as string;
  parsed.samples.push({ labels, value: raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw) });
}

const registry = new Registry();
let series = 0;
for (const [name, parsed] of byName) {
  const gauge = new Gauge({ name, help: parsed.help, labelNames: [...parsed.labelNames], registers: [registry] });
  for (const sample of parsed.samples) {
    gauge.set(sample.labels, sample.value);
    series++;
  }
}
byName.clear();
helps.clear();
gc?.();
const heapBytes = process.memoryUsage().heapUsed - heapBefore;

const server = createServer((_req, res) => {
  registry.metrics().then(
    (body) => {
      res.writeHead(200, { 'content-type': registry.contentType, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    },
    (error: unknown) => {
      res.writeHead(500).end(String(error));
    },
  );
});
server.listen(0, '127.0.0.1', () => {
  const ready: PromClientReady = {
    type: 'ready',
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`,
    series,
    heapBytes,
    loadSeconds: (performance.now() - started) / 1000,
  };
  process.send?.(ready);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
