import { deviceMetricName, PER_DEVICE_METRICS, type DeviceKind } from '../catalogue.js';
import { hash2, pick, unit } from './hash.js';
import type { Block } from './minutes.js';
import { noise } from './minutes.js';
import type { Signal } from './signals.js';

/**
 * The disks, network interfaces and mount points of a host, and the per-device metrics the
 * agent sends for them (`system.io.iops_r|sda`, `system.net.bytes_sent|eth0`,
 * `system.disk.in_use|/var`). As on a real host the unsuffixed name is the total:
 * per-device deltas and sizes add up to it exactly (each is a share of the total, the last
 * device takes the rest), per-mount usage adds up to the host's, and per-disk wait times
 * scatter around the host's.
 */

export interface Device {
  readonly name: string;
  /** This device's usual share of the host's total, 0-1; the shares of a kind add up to 1. */
  readonly share: number;
}

export type HostDevices = Readonly<Record<DeviceKind, readonly Device[]>>;

type HostType = 'physical' | 'virtual' | 'container';

const DISK_NAMES: Readonly<Record<HostType, readonly (readonly string[])[]>> = {
  virtual: [['vda'], ['vda', 'vdb']],
  physical: [['sda'], ['sda', 'sdb'], ['nvme0n1'], ['nvme0n1', 'nvme1n1']],
  container: [['sda']],
};
const INTERFACE_NAMES: Readonly<Record<HostType, readonly (readonly string[])[]>> = {
  virtual: [['eth0'], ['eth0', 'eth1']],
  physical: [['eno1'], ['eno1', 'eno2']],
  container: [['eth0']],
};
const EXTRA_MOUNTS: readonly (readonly string[])[] = [['/var'], ['/data'], ['/var', '/srv'], ['/home', '/var']];

function withShares(names: readonly string[], firstShare: number): Device[] {
  if (names.length === 1) return [{ name: names[0] ?? '', share: 1 }];
  const rest = (1 - firstShare) / (names.length - 1);
  return names.map((name, k) => ({ name, share: k === 0 ? firstShare : rest }));
}

/** The devices of a host of this type, from one of its profile hashes. */
export function hostDevices(type: HostType, h: number): HostDevices {
  const mounts = unit(hash2(h, 1)) < 0.3 ? ['/'] : ['/', ...pick(hash2(h, 2), EXTRA_MOUNTS)];
  return {
    disk: withShares(pick(hash2(h, 3), DISK_NAMES[type]), 0.55 + 0.35 * unit(hash2(h, 4))),
    interface: withShares(pick(hash2(h, 5), INTERFACE_NAMES[type]), 0.8 + 0.15 * unit(hash2(h, 6))),
    mount: withShares(mounts, 0.3 + 0.4 * unit(hash2(h, 7))),
  };
}

/** The kind of device a host-level name is split by, or undefined when the agent sends it only as a total. */
export function deviceKindOf(base: string): DeviceKind | undefined {
  return (['disk', 'interface', 'mount'] as const).find((kind) => PER_DEVICE_METRICS[kind].includes(base));
}

/** Per-device names of a host grouped as the agent lists them: by kind, metric, then device. */
export function deviceMetricNames(devices: HostDevices): string[] {
  const names: string[] = [];
  for (const kind of ['disk', 'interface', 'mount'] as const) {
    for (const base of PER_DEVICE_METRICS[kind]) {
      for (const device of devices[kind]) names.push(deviceMetricName(base, device.name));
    }
  }
  return names;
}

/**
 * Device k's part of an integer total: its share, moved a little minute by minute, for
 * every device but the last; the last takes what is left, so the parts add up exactly.
 */
function part(total: number, devices: readonly Device[], k: number, b: Block, i: number, salt: number): number {
  if (devices.length === 1) return total;
  let given = 0;
  for (let d = 0; d < devices.length - 1; d++) {
    const share = Math.min(1, (devices[d]?.share ?? 0) * (0.85 + 0.3 * noise(b, i, salt + d)));
    const value = Math.min(total - given, Math.floor(total * share));
    if (d === k) return value;
    given += value;
  }
  return total - given;
}

const round2 = (x: number): number => Math.round(x * 100) / 100;

/** The signal of `base|device` on a host whose devices are `devices`, built from the host-level signals. */
export function deviceSignal(
  kind: DeviceKind,
  base: string,
  deviceIndex: number,
  devices: HostDevices,
  hostSignal: (name: string) => Signal,
): Signal {
  const list = devices[kind];
  const salt = 0xde0 + base.length * 7;
  if (kind === 'mount') return mountSignal(base, deviceIndex, list, hostSignal);
  const total = hostSignal(base);
  if (base.startsWith('system.io.wait_')) {
    // A wait time is per operation, not a sum: each disk's scatters around the host's.
    return (p, b, i) => round2(total(p, b, i) * (0.7 + 0.6 * noise(b, i, salt + deviceIndex)));
  }
  return (p, b, i) => part(total(p, b, i), list, deviceIndex, b, i, salt);
}

function mountSignal(base: string, k: number, mounts: readonly Device[], hostSignal: (name: string) => Signal): Signal {
  const diskTotal = hostSignal('system.disk.total');
  const diskUsed = hostSignal('system.disk.used');
  // Partitions do not change size minute by minute: their split uses the fixed shares.
  const size = (p: Parameters<Signal>[0], b: Block, i: number, d: number): number => fixedPart(diskTotal(p, b, i), mounts, d);
  const used = (p: Parameters<Signal>[0], b: Block, i: number, d: number): number => fixedPart(diskUsed(p, b, i), mounts, d);
  switch (base) {
    case 'system.disk.total':
      return (p, b, i) => size(p, b, i, k);
    case 'system.disk.used':
      return (p, b, i) => used(p, b, i, k);
    case 'system.disk.free':
      return (p, b, i) => size(p, b, i, k) - used(p, b, i, k);
    case 'system.disk.in_use':
      return (p, b, i) => {
        const total = size(p, b, i, k);
        return total > 0 ? round2((used(p, b, i, k) / total) * 100) : 0;
      };
    default:
      throw new Error(`simulator: ${base} has no per-mount signal`);
  }
}

/** Device k's part by its fixed share; the last takes the rest. Used ≤ size holds per mount since used ≤ total. */
function fixedPart(total: number, devices: readonly Device[], k: number): number {
  let given = 0;
  for (let d = 0; d < devices.length - 1; d++) {
    const value = Math.floor(total * (devices[d]?.share ?? 0));
    if (d === k) return value;
    given += value;
  }
  return total - given;
}
