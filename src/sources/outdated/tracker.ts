import type { MetricSink } from '../../exposition/model.js';
import type { Component } from '../components/decode.js';
import { groupName } from '../source.js';
import {
  agentInstall,
  CHECK_RESULTS,
  componentInstalls,
  emptyCounts,
  mapCheckCounts,
  mapHostChecks,
  mapLatestVersions,
  type CheckCounts,
  type Install,
  lookupKey,
  type LineAnswer,
} from './map.js';
import { wantedLines, type WantedLine } from './plan.js';
import type { SoftwareRules } from './software.js';

/** What an account's sources tell the outdated check; one per account. */
export interface InstalledVersionsFeed {
  /** A host's components, as `/hosts/{uuid}/components` answered. */
  components(hostUuid: string, components: readonly Component[]): void;
  /** The host is no longer polled: its components are gone. */
  forgetComponents(hostUuid: string): void;
  /** The agents of every host the account polls; a host not listed has none any more. */
  agents(hosts: readonly { readonly uuid: string; readonly agent_version?: string | undefined }[]): void;
}

/** The outcome of one lookup, as the release runtime hands it over. */
export type LineOutcome = { readonly ok: true; readonly version: string; readonly tagDate?: string | undefined } | { readonly ok: false; readonly message: string };

interface HostEntry {
  readonly account: string;
  readonly uuid: string;
  components: readonly Install[];
  agent: Install | undefined;
  counts: CheckCounts;
  /** Identity of what was last published, to skip republishing what did not change. */
  signature: string;
}

const SOURCE = 'outdated';
const LATEST_GROUP = 'outdated_latest';
const MAX_UNKNOWN_IN_STATUS = 20;

/**
 * Holds what is installed where (fed by the components and hosts sources of every account
 * this process polls) and what the release lookups answered, and publishes the outdated
 * check: per host `monapi_component_outdated`, per account `monapi_component_version_checks`,
 * and the latest release of every line in use. The release runtime asks it which lines to
 * look up (`wantedLines`) and hands it the answers (`record`); it hears of lines no lookup
 * has covered yet through `onNewLines`.
 */
export class OutdatedTracker {
  private readonly hosts = new Map<string, HostEntry>();
  private readonly accounts = new Set<string>();
  private readonly answers = new Map<string, LineAnswer>();
  private wanted: readonly WantedLine[] = [];
  private readonly listeners: (() => void)[] = [];

  constructor(private readonly options: { readonly rules: SoftwareRules; readonly sink: MetricSink }) {}

  get rules(): SoftwareRules {
    return this.options.rules;
  }

  /** The feed of one account's sources. Publishes the account's (zero) counts at once. */
  forAccount(account: string): InstalledVersionsFeed {
    if (!this.accounts.has(account)) {
      this.accounts.add(account);
      this.publishCounts(account);
    }
    const changed = (uuid: string, change: (host: HostEntry) => void): void => {
      if (this.apply(account, uuid, change)) this.afterChange(account);
    };
    return {
      components: (uuid, components) => changed(uuid, (host) => (host.components = componentInstalls(components, this.options.rules))),
      forgetComponents: (uuid) => changed(uuid, (host) => (host.components = [])),
      agents: (hosts) => {
        const listed = new Set<string>();
        let any = false;
        for (const host of hosts) {
          listed.add(host.uuid);
          any = this.apply(account, host.uuid, (entry) => (entry.agent = agentInstall(host.agent_version, this.options.rules))) || any;
        }
        for (const entry of [...this.hosts.values()]) {
          if (entry.account === account && !listed.has(entry.uuid)) any = this.apply(account, entry.uuid, (e) => (e.agent = undefined)) || any;
        }
        if (any) this.afterChange(account);
      },
    };
  }

  /** An account is no longer polled (a reload removed it): its hosts and counts leave /metrics. */
  forgetAccount(account: string): void {
    if (!this.accounts.delete(account)) return;
    for (const [id, host] of [...this.hosts]) {
      if (host.account !== account) continue;
      this.hosts.delete(id);
      this.options.sink.retract(groupName(SOURCE, account, host.uuid));
    }
    this.options.sink.retract(groupName(SOURCE, account));
    this.refreshWanted();
  }

  /** The accounts with a feed. */
  knownAccounts(): readonly string[] {
    return [...this.accounts];
  }

  /** Called when installs need a line that has no answer and was not needed before. */
  onNewLines(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** The lines installed versions need now, each once. */
  wantedLines(): readonly WantedLine[] {
    return this.wanted;
  }

  /** A lookup of `key` finished; a failure keeps the last release found (it is still a lower bound). */
  record(key: string, outcome: LineOutcome): void {
    const previous = this.answers.get(key);
    this.answers.set(
      key,
      outcome.ok
        ? { latest: { version: outcome.version, tagDate: outcome.tagDate }, error: undefined }
        : { latest: previous?.latest, error: outcome.message },
    );
    const touched = new Set<string>();
    for (const host of this.hosts.values()) {
      if (this.installsOf(host).some((i) => lineKeyOf(i) === key)) {
        this.publishHost(host);
        touched.add(host.account);
      }
    }
    for (const account of touched) this.publishCounts(account);
    this.publishLatest();
  }

  /** Forgets the answer of a line no longer needed. */
  forgetLine(key: string): void {
    if (this.answers.delete(key)) this.publishLatest();
  }

  status(): Record<string, unknown> {
    const unknown: Record<string, string>[] = [];
    const counts = new Map<string, CheckCounts>([...this.accounts].map((a) => [a, this.countsOf(a)]));
    for (const host of this.hosts.values()) {
      for (const item of this.installsOf(host)) {
        if (item.version === undefined && unknown.length < MAX_UNKNOWN_IN_STATUS) {
          unknown.push({ account: host.account, host_uuid: host.uuid, component: item.component, software: item.software, version: item.rawVersion });
        }
      }
    }
    return {
      software: Object.fromEntries([...this.options.rules].map(([software, rule]) => [software, { project: rule.project, line: rule.line }])),
      lines: this.wanted.map((w) => {
        const answer = this.answers.get(w.key);
        return {
          project: w.project,
          line: w.line ?? '',
          software: w.software,
          installs: w.installs,
          latest_version: answer?.latest?.version,
          last_error: answer?.error,
        };
      }),
      checks: Object.fromEntries(counts),
      unknown_versions: unknown,
    };
  }

  private installsOf(host: HostEntry): Install[] {
    return host.agent === undefined ? [...host.components] : [...host.components, host.agent];
  }

  /** Changes one host's installs and republishes it when they differ; true when they did. */
  private apply(account: string, uuid: string, change: (host: HostEntry) => void): boolean {
    const id = `${account}\u0000${uuid}`;
    const host = this.hosts.get(id) ?? { account, uuid, components: [], agent: undefined, counts: emptyCounts(), signature: '' };
    change(host);
    const installs = this.installsOf(host);
    const signature = installs.map((i) => [i.component, i.software, i.rawVersion, i.project, i.line ?? ''].join('\u0000')).join('\u0001');
    if (signature === host.signature) return false;
    host.signature = signature;
    if (installs.length === 0) {
      this.hosts.delete(id);
      this.options.sink.retract(groupName(SOURCE, account, uuid));
    } else {
      this.hosts.set(id, host);
      this.publishHost(host);
    }
    return true;
  }

  private afterChange(account: string): void {
    this.publishCounts(account);
    this.refreshWanted();
  }

  private publishHost(host: HostEntry): void {
    const { families, counts } = mapHostChecks(this.installsOf(host), (key) => this.answers.get(key), { account: host.account, hostUuid: host.uuid });
    host.counts = counts;
    this.options.sink.publish(groupName(SOURCE, host.account, host.uuid), families);
  }

  private countsOf(account: string): CheckCounts {
    const total = emptyCounts();
    for (const host of this.hosts.values()) {
      if (host.account !== account) continue;
      for (const result of CHECK_RESULTS) total[result] += host.counts[result];
    }
    return total;
  }

  private publishCounts(account: string): void {
    this.options.sink.publish(groupName(SOURCE, account), mapCheckCounts(account, this.countsOf(account)));
  }

  private publishLatest(): void {
    this.options.sink.publish(LATEST_GROUP, mapLatestVersions(this.wanted.map((w) => ({ project: w.project, line: w.line, answer: this.answers.get(w.key) }))));
  }

  private refreshWanted(): void {
    const before = new Set(this.wanted.map((w) => w.key));
    this.wanted = wantedLines([...this.hosts.values()].flatMap((host) => this.installsOf(host)));
    const keys = this.wanted.map((w) => w.key);
    if (keys.length !== before.size || keys.some((k) => !before.has(k))) this.publishLatest();
    if (keys.some((key) => !before.has(key) && !this.answers.has(key))) for (const listener of this.listeners) listener();
  }
}

function lineKeyOf(item: Install): string | undefined {
  return item.version === undefined ? undefined : lookupKey(item.project, item.line);
}
