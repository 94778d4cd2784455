import { setFlagsFromString } from 'node:v8';

/**
 * Garbage-collector settings for the exporter's threads (V8's flags are per process, so the
 * builder thread gets them too). Set when the exporter starts, before the steady state trains
 * the collector.
 *
 * Allocation-site pretenuring off: the exporter's short-lived objects (a publish's lines, a
 * snapshot's piece lists) sometimes outlive one young-generation collection, which makes V8
 * allocate every later object of the same site in the old generation, where only full
 * collections free them; at a million series that about doubled what full collections had to
 * free (bench `--allocations old`, which also counts the young garbage they sweep: 650 MB a
 * minute with it, 322 MB without). docs/scaling.md.
 */
export function applyHeapSettings(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}
