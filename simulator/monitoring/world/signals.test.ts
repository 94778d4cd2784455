import { describe, expect, it } from 'vitest';

import { AGENT_METRICS as METRIC_CATALOGUE } from '../catalogue.js';
import { createHostProfile, type HostProfile } from './hosts.js';
import { hostSignal, signalFor, valueAt } from './signals.js';
import { PER_DEVICE_METRICS } from '../catalogue.js';

const START_MINUTE = Math.floor(Date.UTC(2026, 10, 20) / 60_000);
const counters = new Map<string, number>();
const profiles: HostProfile[] = Array.from({ length: 40 }, (_, index) =>
  createHostProfile({ seed: 99, accountSlot: 0, index, hostnameCounters: counters }),
);
/** Every 73rd minute over three days: covers peaks, troughs and some bursts. */
const minutes = Array.from({ length: 60 }, (_, k) => START_MINUTE + k * 73);

/** Runs `check` over hosts × minutes and asserts once (an expect() per value is slow). */
function expectEverywhere(hosts: HostProfile[], check: (p: HostProfile, m: number) => string | undefined): void {
  const problems: string[] = [];
  for (const p of hosts) {
    for (const m of minutes) {
      const problem = check(p, m);
      if (problem) problems.push(`${p.hostname} minute ${m}: ${problem}`);
    }
  }
  expect(problems.slice(0, 5)).toEqual([]);
}

function value(p: HostProfile, name: string, m: number): number {
  const signal = signalFor(name);
  if (!signal) throw new Error(`no signal for ${name}`);
  return valueAt(signal, p, m);
}

function hostsWith(component: string): HostProfile[] {
  const found = profiles.filter((p) => p.components.has(component as never));
  if (found.length === 0) throw new Error(`no test host has ${component}`);
  return found;
}

describe('signals per unit', () => {
  // Violations are collected and asserted once: an expect() per value would make this slow.
  it.each(METRIC_CATALOGUE.map((e) => [e.name, e] as const))('%s stays in range for its unit and kind', (name, entry) => {
    const problems: string[] = [];
    for (const p of hostsWith(entry.component)) {
      for (const m of minutes) {
        const v = value(p, name, m);
        if (!Number.isFinite(v) || v < 0) problems.push(`${v} is not a finite non-negative number`);
        if (entry.kind === 'delta' && !Number.isInteger(v)) problems.push(`${v} is not an integer`);
        if (entry.unit === 'percent' && v > 100) problems.push(`${v} is above 100 %`);
        if (entry.unit === 'status' && v !== 0 && v !== 1) problems.push(`${v} is not a status`);
      }
    }
    expect(problems.slice(0, 5)).toEqual([]);
  });

  it('is not constant where it should move (the daily cycle shows)', () => {
    const p = hostsWith('nginx')[0] as HostProfile;
    const values = new Set(minutes.map((m) => value(p, 'nginx.http.request.count', m)));
    expect(values.size).toBeGreaterThan(30);
  });
});

describe('relations between metrics', () => {
  const sum = (p: HostProfile, m: number, names: string[]): number => names.reduce((s, n) => s + value(p, n, m), 0);

  it('cpu parts add up to 100', () => {
    expectEverywhere(profiles, (p, m) => {
      const total = sum(p, m, ['user', 'system', 'iowait', 'idle', 'stolen'].map((k) => `system.cpu.${k}`));
      return Math.abs(total - 100) > 1e-6 ? `cpu adds up to ${total}` : undefined;
    });
  });

  it('memory, swap and disk: used + free = total', () => {
    expectEverywhere(profiles, (p, m) => {
      for (const area of ['mem', 'swap', 'disk']) {
        const total = value(p, `system.${area}.total`, m);
        if (value(p, `system.${area}.used`, m) + value(p, `system.${area}.free`, m) !== total) return `${area} does not add up`;
      }
      return undefined;
    });
  });

  it('nginx status classes, methods and versions add up to the request count', () => {
    expectEverywhere(hostsWith('nginx'), (p, m) => {
      const total = value(p, 'nginx.http.request.count', m);
      if (sum(p, m, ['1xx', '2xx', '3xx', '4xx', '5xx'].map((c) => `nginx.http.status.${c}`)) !== total) return 'status classes';
      if (sum(p, m, ['get', 'head', 'post', 'put', 'delete', 'options'].map((c) => `nginx.http.method.${c}`)) !== total) return 'methods';
      if (sum(p, m, ['v1_0', 'v1_1', 'v2'].map((c) => `nginx.http.${c}`)) !== total) return 'versions';
      const fives = sum(p, m, ['500', '502', '503', '504'].map((c) => `nginx.http.status.${c}`));
      return fives !== value(p, 'nginx.http.status.5xx', m) ? '5xx split' : undefined;
    });
  });

  it('timers: max >= pctl95 >= mean >= median >= 0', () => {
    const bases = ['nginx.http.request.time', 'nginx.upstream.response.time', 'nginx.upstream.connect.time', 'nginx.upstream.header.time'];
    expectEverywhere(hostsWith('nginx'), (p, m) => {
      for (const base of bases) {
        const [mean, max, median, p95] = ['', '.max', '.median', '.pctl95'].map((s) => value(p, base + s, m)) as [number, number, number, number];
        if (!(max >= p95 && p95 >= mean && mean >= median && median >= 0)) return `${base}: ${max} ${p95} ${mean} ${median}`;
      }
      return undefined;
    });
  });

  it('php-fpm idle + active = total <= max children; mysql writes = insert + update + delete', () => {
    expectEverywhere(hostsWith('php-fpm'), (p, m) => {
      const total = value(p, 'php.fpm.proc.total', m);
      if (value(p, 'php.fpm.proc.idle', m) + value(p, 'php.fpm.proc.active', m) !== total) return 'procs';
      return total > value(p, 'php.fpm.proc.max_child', m) ? 'more procs than max_child' : undefined;
    });
    expectEverywhere(hostsWith('mysql'), (p, m) =>
      value(p, 'mysql.global.writes', m) !== sum(p, m, ['insert', 'update', 'delete'].map((k) => `mysql.global.${k}`))
        ? 'writes'
        : undefined,
    );
  });

  it('is a pure function of (host, minute): same answer in any order', () => {
    const p = profiles[3] as HostProfile;
    const forward = minutes.map((m) => value(p, 'system.net.bytes_rcvd', m));
    const backward = [...minutes].reverse().map((m) => value(p, 'system.net.bytes_rcvd', m)).reverse();
    expect(backward).toEqual(forward);
  });
});

describe('per-device metrics', () => {
  const perDevice = (p: HostProfile, name: string, m: number): number => {
    const signal = hostSignal(p, name);
    if (!signal) throw new Error(`no signal for ${name} on ${p.hostname}`);
    return valueAt(signal, p, m);
  };

  it('hosts have one or two disks and interfaces, one to three mount points with / among them', () => {
    for (const p of profiles) {
      expect(p.devices.disk.length).toBeGreaterThanOrEqual(1);
      expect(p.devices.disk.length).toBeLessThanOrEqual(2);
      expect(p.devices.interface.length).toBeGreaterThanOrEqual(1);
      expect(p.devices.interface.length).toBeLessThanOrEqual(2);
      expect(p.devices.mount.length).toBeGreaterThanOrEqual(1);
      expect(p.devices.mount.length).toBeLessThanOrEqual(3);
      expect(p.devices.mount[0]?.name).toBe('/');
    }
    expect(profiles.some((p) => p.devices.disk.length === 2 && p.devices.mount.length === 3)).toBe(true);
  });

  it('per-disk and per-interface deltas and per-mount sizes add up to the host totals exactly', () => {
    expectEverywhere(profiles, (p, m) => {
      const bases = [...PER_DEVICE_METRICS.disk.filter((b) => !b.includes('wait')), ...PER_DEVICE_METRICS.interface, 'system.disk.total', 'system.disk.used', 'system.disk.free'];
      for (const base of bases) {
        const kind = base.startsWith('system.io') ? 'disk' : base.startsWith('system.net') ? 'interface' : 'mount';
        const parts = p.devices[kind].map((d) => perDevice(p, `${base}|${d.name}`, m));
        if (parts.some((v) => !Number.isInteger(v) || v < 0)) return `${base}: ${parts.join(', ')}`;
        const total = value(p, base, m);
        if (parts.reduce((a, b) => a + b, 0) !== total) return `${base}: ${parts.join(' + ')} != ${total}`;
      }
      return undefined;
    });
  });

  it('each mount point: used + free = total, in_use = used / total, and per-disk wait stays near the host\'s', () => {
    expectEverywhere(profiles, (p, m) => {
      for (const { name } of p.devices.mount) {
        const [total, used, free, inUse] = ['total', 'used', 'free', 'in_use'].map((k) => perDevice(p, `system.disk.${k}|${name}`, m)) as [number, number, number, number];
        if (used + free !== total || used > total) return `${name}: ${used} + ${free} != ${total}`;
        if (Math.abs(inUse - (used / total) * 100) > 0.01 || inUse > 100) return `${name}: in_use ${inUse}`;
      }
      for (const { name } of p.devices.disk) {
        const wait = perDevice(p, `system.io.wait_r|${name}`, m);
        const host = value(p, 'system.io.wait_r', m);
        // Both are rounded to 0.01 ms.
        if (wait < host * 0.7 - 0.011 || wait > host * 1.3 + 0.011) return `wait_r|${name} ${wait} vs ${host}`;
      }
      return undefined;
    });
  });

  it('names a host does not have get no signal', () => {
    const p = profiles[0] as HostProfile;
    expect(hostSignal(p, 'system.io.iops_r|sdz')).toBeUndefined();
    expect(hostSignal(p, 'system.load.1|sda')).toBeUndefined();
    expect(hostSignal(p, 'no.such.metric')).toBeUndefined();
  });
});
