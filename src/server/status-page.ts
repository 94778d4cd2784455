import type { MissingField } from './status.js';
import { NOTHING, badge, clippedText, count, duration, escapeHtml, externalLink, htmlPage, table, type Tone, utc, when } from './html.js';
import { overall, type BudgetView, type PlanView, type ReleasesView, type SourceView, type StatusView, type UnitView } from './status-view.js';

/**
 * `/status` for people, in the spirit of Prometheus' `/targets`: a header with version,
 * uptime, readiness and the configuration's last reload; per account its plan, its request
 * budget and every source with its state, the age of its data, its last error, the fields no
 * answer carries (with the `fields:` lines that would place them) and the lists read short;
 * then the release lookups and the outdated software. Drawn from the same value as the JSON.
 */

export interface StatusPageInfo {
  readonly status: StatusView;
  readonly ready: boolean;
  readonly notReadyReason: string | undefined;
  /** Declared fields no answer carries, with what each is (the JSON names only the field). */
  readonly missing: readonly MissingField[];
  readonly version: string;
  readonly telemetryPath: string;
  readonly nowMs: number;
  readonly startedMs: number;
  /** Series the self-metrics add to a scrape; undefined when they could not be counted. */
  readonly selfSeries: number | undefined;
}

/** Longest upstream text shown in a cell; the JSON has the whole of it. */
const MESSAGE_CHARS = 400;
const NAME_CHARS = 120;
/** Recent errors shown per account, newest first. */
const ERRORS_SHOWN = 10;

export function statusPage(info: StatusPageInfo): string {
  const { status } = info;
  const units = [...status.accounts.map((a, i) => ({ unit: a, id: `account-${i + 1}`, title: `Account ${a.name}` }))];
  const sections = [
    navigation(units, status.releases),
    ...units.map(({ unit, id }) => accountSection(unit, id, info)),
    status.releases === undefined ? '' : releasesSection(status.releases, info.nowMs),
    footer(info),
  ];
  return htmlPage(`monapi-exporter status`, header(info), sections.filter((s) => s !== '').join('\n'));
}

/** How many sources and accounts work, fail or wait: what the readiness statement says. */
export interface Health {
  readonly sources: number;
  readonly failing: number;
  readonly pending: number;
  readonly accounts: number;
  readonly accountsDown: number;
}

export function healthOf(view: StatusView): Health {
  const o = overall(view);
  return { sources: o.sources, failing: o.failing.length, pending: o.pending, accounts: view.accounts.length, accountsDown: o.accountsDown.length };
}

/**
 * One consistent statement of readiness and source health, for this page and the landing page:
 * never "not ready" next to "every source works". `word` is short, for a badge.
 */
export function stateSummary(health: Health, ready: boolean, notReadyReason: string | undefined): { tone: Tone; word: string; sentence: string } {
  const failing = health.failing + health.accountsDown;
  const pending = health.pending === 0 ? '' : ` ${health.pending} ${health.pending === 1 ? 'source has' : 'sources have'} not run yet.`;
  if (!ready) {
    if (notReadyReason === 'shutting down') return { tone: 'bad', word: 'Shutting down', sentence: 'Shutting down: /-/ready answers 503.' };
    const sources = failing === 0 ? 'No source has failed so far.' : `${failing} failing so far (below).`;
    return {
      tone: 'idle',
      word: 'Starting',
      sentence: `Starting: not ready (${notReadyReason ?? 'waiting for the first complete polling cycle'}); /-/ready answers 503 until every account has finished its first polling cycle. ${sources}${pending}`,
    };
  }
  if (failing === 0) return { tone: 'ok', word: 'Ready', sentence: `Ready. Every source works.${pending}` };
  const what = [
    health.accountsDown > 0 ? `${health.accountsDown} of ${health.accounts} ${health.accounts === 1 ? 'account' : 'accounts'} down` : '',
    health.failing > 0 ? `${health.failing} of ${Math.max(health.sources, health.failing)} sources failing` : '',
  ]
    .filter((s) => s !== '')
    .join(', ');
  return { tone: 'warn', word: 'Ready', sentence: `Ready, ${what}: scrapes get the last data of what fails, and each says why below.${pending}` };
}

/** `4,577 series on /metrics: 3,200 from the upstream APIs and 1,377 about the exporter itself`, escaped. */
export function seriesSentence(storeSeries: number, selfSeries: number | undefined, telemetryPath: string): string {
  const path = `<a href="${escapeHtml(telemetryPath)}">${escapeHtml(telemetryPath)}</a>`;
  if (selfSeries === undefined) return `${count(storeSeries)} series from the upstream APIs on ${path}, and the exporter's own metrics (not counted)`;
  return `${count(storeSeries + selfSeries)} series on ${path}: ${count(storeSeries)} from the upstream APIs and ${count(selfSeries)} about the exporter itself`;
}

function header(info: StatusPageInfo): string {
  const { status } = info;
  const state = stateSummary(healthOf(status), info.ready, info.notReadyReason);
  const facts = [
    `<span class="label">Up</span> ${duration((info.nowMs - info.startedMs) / 1000)} <span class="muted">(since ${escapeHtml(utc(info.startedMs))})</span>`,
    configFact(status, info.nowMs),
    status.exposition?.series === undefined ? '' : seriesSentence(status.exposition.series, info.selfSeries, info.telemetryPath),
    status.shard !== undefined && status.shard.total > 1
      ? `<span class="label">Shard</span> ${status.shard.ordinal + 1} of ${status.shard.total}: ${status.accounts.length} accounts here, ${status.shard.accountsElsewhere} on other shards; release lookups ${status.shard.releasesHere ? 'here' : 'on shard 1'}`
      : '',
  ].filter((f) => f !== '');
  return `<h1>monapi-exporter ${escapeHtml(info.version)}</h1>
<p>${badge(state.tone, state.word)} ${escapeHtml(state.sentence)}</p>
<ul class="facts">${facts.map((f) => `<li>${f}</li>`).join('')}</ul>
<ul class="facts"><li><a href="/">Home</a></li><li><a href="${escapeHtml(info.telemetryPath)}">Metrics</a></li><li><a href="/status?format=json">This page as JSON</a></li><li><a href="/-/ready">/-/ready</a></li></ul>`;
}

function configFact(status: StatusView, nowMs: number): string {
  const config = status.config;
  if (config === undefined) return '';
  const at = config.atMs === undefined ? '' : ` ${when(config.atMs, nowMs)}`;
  if (config.ok) return `<span class="label">Configuration</span> loaded${at}`;
  return `<span class="label">Configuration</span> ${badge('bad', 'last reload failed')}${at}: ${clippedText(config.error ?? 'no reason given', MESSAGE_CHARS)}; the previous configuration stays in force`;
}

function navigation(units: readonly { unit: UnitView; id: string }[], releases: ReleasesView | undefined): string {
  if (units.length === 0 && releases === undefined) return '<p>No account is polled by this exporter.</p>';
  const item = (unit: UnitView, id: string, title: string) => {
    const up = unit.sources.filter((s) => s.up).length;
    return `<li><a href="#${id}">${escapeHtml(title)}</a> ${unitBadge(unit)} <span class="muted">${up}/${unit.sources.length} sources up</span></li>`;
  };
  const items = [...units.map(({ unit, id }) => item(unit, id, unit.name)), ...(releases ? [item(releases, 'releases', 'release lookups')] : [])];
  return `<nav aria-label="accounts"><ul>${items.join('')}</ul></nav>`;
}

/** The account's own state: its key (up, or down with the reason), else whether a source fails. */
function unitBadge(unit: UnitView): string {
  if (unit.up === false) return badge(unit.reason === 'pending' ? 'idle' : 'bad', unit.reason ?? 'down');
  const failing = unit.sources.filter((s) => !s.up && s.reason !== 'pending').length;
  if (failing > 0) return badge('warn', `${failing} failing`);
  if (unit.sources.some((s) => s.reason === 'pending')) return badge('idle', 'pending');
  return badge('ok', 'up');
}

function accountSection(unit: UnitView, id: string, info: StatusPageInfo): string {
  const facts = [
    subscriptionFact(unit),
    unit.hostsPolled === undefined ? '' : `<span class="label">Polled</span> ${count(unit.hostsPolled)} hosts, ${count(unit.websitesPolled ?? 0)} websites`,
    unit.series === undefined ? '' : `<span class="label">Series</span> ${count(unit.series)}`,
  ].filter((f) => f !== '');
  const upgrade = unit.upgradeUrl === undefined ? '' : `<p class="problem">The plan of this account does not include API access. ${externalLink(unit.upgradeUrl, 'Upgrade: ')}</p>`;
  return `<section id="${id}">
<h2>Account ${escapeHtml(clip(unit.name))} ${unitBadge(unit)}</h2>
${upgrade}
<ul class="facts">${facts.map((f) => `<li>${f}</li>`).join('')}</ul>
${budgetFacts(unit.budget, unit.plan, unit.lagSeconds, info.nowMs)}
${sourcesTable(unit.sources, info.nowMs)}
${listProblems(unit)}
${fieldProblems(unit, info.missing)}
${errorsDetails(unit, info.nowMs)}
</section>`;
}

function subscriptionFact(unit: UnitView): string {
  const s = unit.subscription;
  if (s === undefined) return `<span class="label">Plan</span> <span class="muted">not known yet (from /account)</span>`;
  const limits = [s.hostLimit === undefined ? '' : `${count(s.hostsUsed ?? 0)} of ${count(s.hostLimit)} hosts`, s.websiteLimit === undefined ? '' : `${count(s.websitesUsed ?? 0)} of ${count(s.websiteLimit)} websites`].filter((l) => l !== '');
  return `<span class="label">Plan</span> ${s.plan === undefined ? '<span class="muted">not named</span>' : `<strong>${clippedText(s.plan, NAME_CHARS)}</strong>`}${limits.length > 0 ? ` (${limits.join(', ')})` : ''}`;
}

const perMinute = (perSecond: number) => `${(perSecond * 60).toFixed(perSecond * 60 >= 100 ? 0 : 1)}/min`;

function budgetFacts(budget: BudgetView | undefined, plan: PlanView | undefined, lagSeconds: number | undefined, nowMs: number): string {
  if (budget === undefined) return '';
  const allowed =
    budget.ratePerSecond === undefined
      ? ''
      : `<span class="label">Allowed</span> ${perMinute(budget.ratePerSecond)}${budget.configuredRatePerSecond !== undefined && budget.configuredRatePerSecond !== budget.ratePerSecond ? ` (lowered after a 429; normally ${perMinute(budget.configuredRatePerSecond)})` : ''}${budget.burst === undefined ? '' : `, burst ${count(budget.burst)}`}`;
  const planned =
    plan?.demandPerSecond === undefined
      ? ''
      : `<span class="label">Planned</span> ${perMinute(plan.demandPerSecond)}${plan.pressure === undefined ? '' : ` (${Math.round(plan.pressure * 100)} % of the budget)`}${plan.fullCycleSeconds === undefined ? '' : `; a full cycle${plan.requestsPerCycle === undefined ? '' : ` (${count(plan.requestsPerCycle)} requests)`} takes ${duration(plan.fullCycleSeconds)} at this rate`}`;
  const unsent = budget.failedFast > 0 ? `, ${count(budget.failedFast)} not sent while the key was refused` : '';
  const paused = budget.pauses > 0 ? `; paused ${count(budget.pauses)} ${budget.pauses === 1 ? 'time' : 'times'} (${duration(budget.pausedSeconds)})` : '';
  const used = `<span class="label">Used since start</span> ${count(budget.attempts)} requests sent${budget.retries > 0 ? ` (${count(budget.retries)} retries)` : ''}, <strong>${count(budget.rateLimited)} × 429</strong>; ${count(budget.succeeded)} answered, ${count(budget.failed - budget.failedFast)} failed${unsent}${paused}`;
  const now = budget.inFlight + budget.queued > 0 ? `<span class="label">Now</span> ${budget.inFlight} in flight, ${budget.queued} queued` : '';
  const warnings = [
    budget.pausedUntilMs === undefined ? '' : `<p class="note">Paused after a 429 until ${when(budget.pausedUntilMs, nowMs)}.</p>`,
    budget.authFailed === undefined ? '' : `<p class="problem">The key was refused (${escapeHtml(budget.authFailed.kind)}): requests fail at once${budget.authFailed.retryAtMs === undefined ? '' : `; one try again ${when(budget.authFailed.retryAtMs, nowMs)}`}.</p>`,
    plan?.pressure !== undefined && plan.pressure > 1 ? `<p class="note">The cadences ask for more than the budget allows: they are stretched (the column Every says by how much).</p>` : '',
    lagSeconds !== undefined && lagSeconds >= 1 ? `<p class="note">Behind schedule by ${duration(lagSeconds)}: the budget cannot keep up with the plan.</p>` : '',
  ];
  return `<h3>Request budget</h3>
<ul class="facts">${[allowed, planned, used, now].filter((f) => f !== '').map((f) => `<li>${f}</li>`).join('')}</ul>
${warnings.join('')}`;
}

function sourceState(s: SourceView): string {
  if (s.up) return badge('ok', 'up');
  if (s.reason === 'pending') return badge('idle', 'pending');
  return badge('bad', s.reason || 'down');
}

/** Data older than two cadences and a minute is late: its source did not succeed in time. */
function age(s: SourceView): string {
  if (s.ageSeconds === undefined) return NOTHING;
  const late = s.cadenceSeconds !== undefined && s.ageSeconds > 2 * s.cadenceSeconds + 60;
  return `${duration(s.ageSeconds)}${late ? ` ${badge('warn', 'stale')}` : ''}`;
}

function cadence(s: SourceView): string {
  if (s.cadenceSeconds === undefined) return NOTHING;
  const stretched = s.configuredCadenceSeconds !== undefined && s.configuredCadenceSeconds !== s.cadenceSeconds;
  return `${duration(s.cadenceSeconds)}${stretched ? ` <span class="muted">(configured ${duration(s.configuredCadenceSeconds ?? 0)})</span>` : ''}`;
}

function listCell(s: SourceView): string {
  const list = s.list;
  if (list === undefined) return NOTHING;
  const pages = `${count(list.lists)} ${list.lists === 1 ? 'list' : 'lists'}, ${count(list.pages)} ${list.pages === 1 ? 'page' : 'pages'}`;
  return list.incomplete > 0 ? `${pages} ${badge('bad', `${list.incomplete} incomplete`)}` : pages;
}

function lastError(s: SourceView, nowMs: number): string {
  const e = s.lastError;
  if (e === undefined) return '';
  const where = [e.atMs === undefined ? '' : when(e.atMs, nowMs), e.target === undefined ? '' : `target ${clippedText(e.target, NAME_CHARS)}`].filter((w) => w !== '').join(', ');
  return `${clippedText(e.message, MESSAGE_CHARS)}${where === '' ? '' : `<br><span class="muted">${where}</span>`}`;
}

function sourcesTable(sources: readonly SourceView[], nowMs: number): string {
  if (sources.length === 0) return '<p class="muted">No source runs for this account.</p>';
  // The ones in trouble first, then those waiting; in the provider's order otherwise.
  const rank = (s: SourceView) => (s.up ? (s.list !== undefined && s.list.incomplete > 0 ? 1 : 3) : s.reason === 'pending' ? 2 : 0);
  const rows = [...sources].sort((a, b) => rank(a) - rank(b)).map((s) => [
    `<code>${clippedText(s.source, NAME_CHARS)}</code>`,
    sourceState(s),
    s.failingTargets > 0 ? `${count(s.failingTargets)} of ${count(s.targets)} failing` : count(s.targets),
    age(s),
    cadence(s),
    listCell(s),
    lastError(s, nowMs),
  ]);
  return `<h3>Sources</h3>\n${table(['Source', 'State', 'Targets', 'Data age', 'Every', 'Lists', 'Last error'], rows, ['name', 'short', 'num', 'short', 'short', undefined, 'wide'])}`;
}

function listProblems(unit: UnitView): string {
  const short = unit.sources.filter((s) => s.list !== undefined && s.list.incomplete > 0);
  if (short.length === 0) return '';
  const items = short.map((s) => {
    const list = s.list;
    const example = list?.example;
    const read = example === undefined ? '' : ` Read ${example.read === undefined ? 'some' : count(example.read)} items${example.announced === undefined ? '' : ` of ${count(example.announced)} announced`}${example.target === undefined ? '' : ` (target ${clippedText(example.target, NAME_CHARS)})`}: ${clippedText(example.reason, MESSAGE_CHARS)}.`;
    const where = list?.path === undefined ? '' : ` at <code>${clippedText(list.path, NAME_CHARS)}</code>${list.via === undefined ? '' : `, next page by ${clippedText(list.via, NAME_CHARS)}`}`;
    return `<li><code>${clippedText(s.source, NAME_CHARS)}</code>: ${count(list?.incomplete ?? 0)} of ${count(list?.lists ?? 0)} lists read short${where}.${read}</li>`;
  });
  return `<div class="problem"><strong>Incomplete lists.</strong> What was read is exported; what was not is missing, and <code>monapi_list_incomplete</code> says so.
<ul class="plain">${items.join('')}</ul>
Raise <code>max_pages_per_list</code>, or name where the next page is with <code>fields: {&lt;source&gt;: {_next: &lt;dotted path&gt;}}</code>; <code>monapi-exporter probe</code> prints the lines to paste (docs/troubleshooting.md, "A list is incomplete").</div>`;
}

function fieldProblems(unit: UnitView, missing: readonly MissingField[]): string {
  const sources = unit.sources.filter((s) => s.missingFields.length > 0);
  if (sources.length === 0) return '';
  const about = (source: string, field: string) => missing.find((m) => m.account === unit.name && m.source === source && m.field === field)?.about;
  const items = sources.flatMap((s) => s.missingFields.map((f) => `<li><code>${escapeHtml(s.source)}.${escapeHtml(f)}</code>${about(s.source, f) === undefined ? '' : `: ${escapeHtml(about(s.source, f) ?? '')}`}</li>`));
  const yaml = [
    'accounts:',
    `  - name: ${unit.name}`,
    '    fields:',
    ...sources.flatMap((s) => [`      ${s.source}:`, ...s.missingFields.map((f) => `        ${f}: <dotted path>${about(s.source, f) === undefined ? '' : `   # ${about(s.source, f) ?? ''}`}`)]),
  ].join('\n');
  return `<div class="note"><strong>Fields not found.</strong> No answer carries these fields, so the metrics made from them are missing (<code>monapi_decode_field_missing</code> is 1 for each):
<ul class="plain">${items.join('')}</ul>
Run <code>monapi-exporter probe</code> to see where the answers hold what, then place each one in the configuration:
<pre>${clippedText(yaml, 4000)}</pre></div>`;
}

function errorsDetails(unit: UnitView, nowMs: number): string {
  if (unit.errors.length === 0) return '';
  const newest = [...unit.errors].sort((a, b) => (b.atMs ?? 0) - (a.atMs ?? 0)).slice(0, ERRORS_SHOWN);
  const rows = newest.map((e) => [e.atMs === undefined ? '' : when(e.atMs, nowMs), `<code>${clippedText(e.source, NAME_CHARS)}</code>`, e.target === undefined ? '' : clippedText(e.target, NAME_CHARS), escapeHtml(e.kind), clippedText(e.message, MESSAGE_CHARS)]);
  return `<details><summary>Recent errors (${unit.errors.length}${unit.errors.length > ERRORS_SHOWN ? `, newest ${ERRORS_SHOWN} shown` : ''})</summary>
${table(['When', 'Source', 'Target', 'Kind', 'Message'], rows, ['name', undefined, undefined, undefined, 'wide'])}
</details>`;
}

function releasesSection(releases: ReleasesView, nowMs: number): string {
  const facts = [
    releases.mode === undefined ? '' : `<span class="label">Mode</span> ${escapeHtml(releases.mode)}`,
    releases.schedule === undefined ? '' : `<span class="label">Schedule</span> <code>${escapeHtml(releases.schedule)}</code>`,
  ].filter((f) => f !== '');
  const projects = releases.projects.map((p) => [
    `<code>${clippedText(p.project, NAME_CHARS)}</code>${p.major === undefined ? '' : ` <span class="muted">major ${clippedText(p.major, NAME_CHARS)}</span>`}`,
    p.version === undefined ? '<span class="muted">not known yet</span>' : clippedText(p.version, NAME_CHARS),
    p.lastSuccessMs === undefined ? '' : when(p.lastSuccessMs, nowMs),
    p.lastError === undefined ? '' : `${clippedText(p.lastError.message, MESSAGE_CHARS)}${p.lastError.atMs === undefined ? '' : `<br>${when(p.lastError.atMs, nowMs)}`}`,
  ]);
  return `<section id="releases">
<h2>Release lookups ${unitBadge(releases)}</h2>
<ul class="facts">${facts.map((f) => `<li>${f}</li>`).join('')}</ul>
${budgetFacts(releases.budget, releases.plan, releases.lagSeconds, nowMs)}
${sourcesTable(releases.sources, nowMs)}
${projects.length === 0 ? '' : `<h3>Projects</h3>\n${table(['Project', 'Latest release', 'Looked up', 'Last error'], projects, ['name', undefined, undefined, 'wide'])}`}
${outdatedSection(releases)}
${errorsDetails(releases, nowMs)}
</section>`;
}

const CHECK_COLUMNS = [
  ['outdated', 'Outdated'],
  ['up_to_date', 'Up to date'],
  ['pending', 'Pending'],
  ['no_answer', 'No answer'],
  ['unknown_version', 'Unknown version'],
] as const;

function outdatedSection(releases: ReleasesView): string {
  const outdated = releases.outdated;
  if (outdated === undefined) return '';
  const checks = outdated.checks.map((c) => [escapeHtml(clip(c.account)), ...CHECK_COLUMNS.map(([key]) => count(c.counts[key] ?? 0))]);
  const lines = outdated.lines.map((l) => [
    escapeHtml(l.software.join(', ')),
    `<code>${clippedText(l.project, NAME_CHARS)}</code>`,
    clippedText(l.line || 'any', NAME_CHARS),
    l.installs === undefined ? '' : count(l.installs),
    l.latest === undefined ? '<span class="muted">not known yet</span>' : clippedText(l.latest, NAME_CHARS),
    l.error === undefined ? '' : clippedText(l.error, MESSAGE_CHARS),
  ]);
  const unknown = outdated.unknownVersions.map((u) => [escapeHtml(clip(u.account)), `<code>${clippedText(u.host, NAME_CHARS)}</code>`, clippedText(u.component, NAME_CHARS), escapeHtml(clip(u.software)), clippedText(u.version, NAME_CHARS)]);
  return `<h3>Outdated software</h3>
${checks.length === 0 ? '' : table(['Account', ...CHECK_COLUMNS.map(([, label]) => label)], checks, ['name', 'num', 'num', 'num', 'num', 'num'])}
${lines.length === 0 ? '' : `<h3>Release lines looked up</h3>\n${table(['Software', 'Project', 'Line', 'Installs', 'Latest', 'Last error'], lines, ['name', undefined, undefined, 'num', undefined, 'wide'])}`}
${unknown.length === 0 ? '' : `<h3>Versions not understood</h3>\n${table(['Account', 'Host', 'Component', 'Software', 'Version'], unknown, ['name', 'wide', 'wide', undefined, undefined])}`}`;
}

function footer(info: StatusPageInfo): string {
  const e = info.status.exposition;
  const exposition = e === undefined ? '' : `Exposition rebuilt ${count(e.generation ?? 0)} times, ${count(e.families ?? 0)} families. `;
  return `<footer>${exposition}Page made ${escapeHtml(utc(info.nowMs))}; times are UTC. Upstream texts longer than ${MESSAGE_CHARS} characters are cut here, whole in <a href="/status?format=json">the JSON</a>.</footer>`;
}

const clip = (value: string) => (value.length > NAME_CHARS ? `${value.slice(0, NAME_CHARS)}…` : value);
