/**
 * The long soak (docs/reliability.md): many simulated hours of the exporter against the
 * simulator, with host churn and intermittent faults, printing the heap after a full GC and
 * the resident memory every simulated hour.
 *
 *   npx tsx scripts/soak.ts --hours 48 --hosts 100 --websites 10
 *
 * Exits 1 when a counter went down or the heap grew by more than 10% from hour 3 to the end.
 */
import { parseArgs } from 'node:util';
import { runSoak } from '../test/faults/soak.js';

const { values } = parseArgs({ options: { hours: { type: 'string', default: '48' }, hosts: { type: 'string', default: '100' }, websites: { type: 'string', default: '10' } } });
const hours = Number(values.hours);
const hosts = Number(values.hosts);
const websites = Number(values.websites);
if (![hours, hosts, websites].every((n) => Number.isInteger(n) && n > 0)) {
  process.stderr.write('soak: --hours, --hosts and --websites must be whole numbers above 0\n');
  process.exit(2);
}
const mib = (n: number) => (n / 1024 / 1024).toFixed(1);
process.stdout.write('hour\theap_MiB\trss_MiB\tseries\thosts\trequests\n');
const result = await runSoak({
  hours,
  hosts,
  websites,
  stepMs: 5_000,
  onSample: (s) => process.stdout.write(`${s.hour}\t${mib(s.heapUsedBytes)}\t${mib(s.rssBytes)}\t${s.seriesExposed}\t${s.hostsPolled}\t${s.upstreamRequests}\n`),
});
const warm = result.samples[Math.min(2, result.samples.length - 1)]?.heapUsedBytes ?? 0;
const last = result.samples.at(-1)?.heapUsedBytes ?? 0;
const growth = warm > 0 ? (last - warm) / warm : 0;
process.stdout.write(`${hours} simulated hours in ${result.realSeconds.toFixed(0)} s; heap ${mib(warm)} MiB at hour 3, ${mib(last)} MiB at the end (${(growth * 100).toFixed(1)}%); counters that went down: ${result.counterDecreases}\n`);
process.exit(result.counterDecreases === 0 && growth <= 0.1 ? 0 : 1);
