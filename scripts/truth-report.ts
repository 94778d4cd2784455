import { parseArgs } from 'node:util';
import { sampleValue } from '../test/support/exposition-text.js';
import { deltaCountersOf, exportedAlertEvents, runTruthScenario, TRUTH_RUN } from '../test/support/truth-run.js';
import { expectedAlertEvents, expectedChecks, expectedDeltaCounter, MINUTE_MS } from '../test/support/truth.js';

/**
 * `npx tsx scripts/truth-report.ts [--horizon 2h30m]`: the figures of issue 9's closing
 * note. Runs the 3-hour late-data scenario of test/exporter/truth.test.ts and prints, for
 * each delta counter, the exporter's increase against the simulator's truth; for each
 * website, the checks counted against the checks the simulator made; and the alert events
 * counted against the events it raised. `--horizon` sets the late-data horizon of account
 * `exact` (account `impatient` always gives late points up at once).
 */

const { values } = parseArgs({ options: { horizon: { type: 'string' }, help: { type: 'boolean' } }, strict: true });
if (values.help) {
  process.stdout.write('Usage: npx tsx scripts/truth-report.ts [--horizon DURATION]   (default 2h30m; 0s to 3h30m)\n');
  process.exit(0);
}
const horizon = values.horizon ?? TRUTH_RUN.horizon;
const run = await runTruthScenario({ horizon });
const { driven, log, snapshots, exact, impatient } = run;
const last = snapshots.at(-1);
if (!last) throw new Error('the run took no snapshot');
const iso = (ms: number) => new Date(ms).toISOString().slice(11, 16);
const out: string[] = [];
const row = (...cells: (string | number)[]) => out.push(cells.map(String).join('\t'));

out.push(`# ${TRUTH_RUN.runMs / 3_600_000} simulated hours from ${new Date(TRUTH_RUN.startMs).toISOString()}, late data ${JSON.stringify(TRUTH_RUN.lateData)}`);
out.push(`# increase: the counter from its start (0 at the exporter's first read) to ${iso(last.atMs)}; truth: the simulator's truth over the minutes covered, as of the last read`);
out.push('# late: minutes that arrived after they were due (counted late); never: minutes that never arrive; pending: on their way at the end');
for (const [name, account, accountHorizon] of [['exact', exact, horizon], ['impatient', impatient, '0s']] as const) {
  out.push('', `## account ${name} (late_data_horizon ${accountHorizon})`);
  row('metric', 'host', 'increase', 'truth', 'diff', 'late', 'never', 'pending');
  let increaseTotal = 0;
  let truthTotal = 0;
  for (const c of deltaCountersOf(name, account, TRUTH_RUN.startMs)) {
    const query = { ...c, ingestDelayMs: TRUTH_RUN.ingestDelayMs };
    const at3 = expectedDeltaCounter(driven.simulator, log, query, last.atMs);
    const increase = sampleValue(last.body, c.series);
    if (!at3 || increase === undefined) {
      row(c.metric, c.hostUuid.slice(0, 8), 'not exported');
      continue;
    }
    const detail = driven.simulator.truth({ key: c.key, hostUuid: c.hostUuid, metric: c.metric, fromMs: at3.fromMs, toMs: at3.toMs, detail: true });
    const late = detail.minutes?.filter((m) => m.arrivesAtMs !== null && m.arrivesAtMs > m.minuteMs + MINUTE_MS + TRUTH_RUN.ingestDelayMs).length ?? 0;
    const truth = at3.truth.sum;
    increaseTotal += increase;
    truthTotal += truth;
    row(c.metric, c.hostUuid.slice(0, 8), increase, truth, increase - truth, late, detail.missing, at3.truth.pending);
  }
  row('all', '', increaseTotal, truthTotal, increaseTotal - truthTotal, '', '');

  out.push('', `checks of account ${name}, from the first read to the last`);
  row('website', 'exported success', 'simulator success', 'exported failure', 'simulator failure');
  for (const website of account.websites(TRUTH_RUN.startMs)) {
    const expected = expectedChecks(account, log, website.id, last.atMs);
    const labels = `account="${name}",website_id="${website.id}",website="${website.name}"`;
    row(
      website.name,
      sampleValue(last.body, `monapi_website_checks_total{${labels},result="success"}`) ?? 'none',
      expected?.success ?? 'no read',
      sampleValue(last.body, `monapi_website_checks_total{${labels},result="failure"}`) ?? 'none',
      expected?.failure ?? 'no read',
    );
  }

  const exported = exportedAlertEvents(last.body, name);
  const expected = expectedAlertEvents(account, log, last.atMs) ?? new Map<string, number>();
  const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  out.push('', `alert events of account ${name}: exported ${sum(exported)}, simulator ${sum(expected)}`);
  for (const key of new Set([...exported.keys(), ...expected.keys()])) row(key, exported.get(key) ?? 0, expected.get(key) ?? 0);
}
process.stdout.write(`${out.join('\n')}\n`);
await run.stop();
