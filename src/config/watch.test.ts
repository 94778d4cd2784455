import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../lib/clock.js';
import { parseConfig } from '../exporter/config.js';
import { configFiles, watchConfigFiles, type ConfigWatch } from './watch.js';

const SECOND = 1_000;

/** Files in memory: a missing one throws as a real read does. */
function memoryFiles(initial: Record<string, string>) {
  const files = new Map(Object.entries(initial));
  const reads: string[] = [];
  return {
    files,
    reads,
    read: (path: string): string => {
      reads.push(path);
      const text = files.get(path);
      if (text === undefined) throw new Error(`${path}: file not found`);
      return text;
    },
  };
}

let watch: ConfigWatch | undefined;
afterEach(() => {
  watch?.stop();
  watch = undefined;
});

describe('watchConfigFiles', () => {
  it('reports a changed file at the next look, once', () => {
    const clock = new FakeClock();
    const fs = memoryFiles({ '/etc/monapi.yaml': 'a', '/etc/keys/pro': 'k1' });
    const changes: (readonly string[])[] = [];
    watch = watchConfigFiles({ intervalMs: 10 * SECOND, clock, files: () => [...fs.files.keys()], onChange: (c) => changes.push(c), readFile: fs.read });
    clock.advance(30 * SECOND);
    expect(changes).toEqual([]);

    fs.files.set('/etc/keys/pro', 'k2');
    clock.advance(9 * SECOND);
    expect(changes, 'not before the interval is over').toEqual([]);
    clock.advance(1 * SECOND);
    expect(changes).toEqual([['/etc/keys/pro']]);
    clock.advance(60 * SECOND);
    expect(changes, 'an unchanged file after a change is no change').toHaveLength(1);
  });

  it('sees a file that vanishes and one that comes back', () => {
    const clock = new FakeClock();
    const fs = memoryFiles({ '/c.yaml': 'a', '/key': 'k' });
    const changes: (readonly string[])[] = [];
    watch = watchConfigFiles({ intervalMs: SECOND, clock, files: () => ['/c.yaml', '/key'], onChange: (c) => changes.push(c), readFile: fs.read });
    fs.files.delete('/key');
    clock.advance(SECOND);
    fs.files.set('/key', 'k');
    clock.advance(SECOND);
    expect(changes).toEqual([['/key'], ['/key']]);
  });

  it('takes up the files a reload newly names, without a second reload for them', () => {
    const clock = new FakeClock();
    const fs = memoryFiles({ '/c.yaml': 'one account', '/key-a': 'a' });
    let named = ['/c.yaml', '/key-a'];
    const changes: (readonly string[])[] = [];
    watch = watchConfigFiles({
      intervalMs: SECOND,
      clock,
      files: () => named,
      readFile: fs.read,
      onChange: (c) => {
        changes.push(c);
        named = ['/c.yaml', '/key-a', '/key-b'];
      },
    });
    fs.files.set('/key-b', 'b');
    fs.files.set('/c.yaml', 'two accounts');
    clock.advance(SECOND);
    clock.advance(5 * SECOND);
    expect(changes).toEqual([['/c.yaml']]);
    fs.files.set('/key-b', 'b2');
    clock.advance(SECOND);
    expect(changes).toEqual([['/c.yaml'], ['/key-b']]);
  });

  it('sees a change made while the reload was reading, at the next look', () => {
    const clock = new FakeClock();
    const fs = memoryFiles({ '/c.yaml': 'v1' });
    const changes: (readonly string[])[] = [];
    watch = watchConfigFiles({
      intervalMs: SECOND,
      clock,
      files: () => ['/c.yaml'],
      readFile: fs.read,
      onChange: (c) => {
        changes.push(c);
        // The reload has read v2; the file changes again before the watcher looks again.
        if (changes.length === 1) fs.files.set('/c.yaml', 'v3');
      },
    });
    fs.files.set('/c.yaml', 'v2');
    clock.advance(SECOND);
    clock.advance(SECOND);
    expect(changes).toEqual([['/c.yaml'], ['/c.yaml']]);
  });

  it('stops looking when stopped, and keeps looking after a failing reload', () => {
    const clock = new FakeClock();
    const fs = memoryFiles({ '/c.yaml': 'v1' });
    let calls = 0;
    watch = watchConfigFiles({
      intervalMs: SECOND,
      clock,
      files: () => ['/c.yaml'],
      readFile: fs.read,
      onChange: () => {
        calls += 1;
        if (calls === 1) throw new Error('reload blew up');
      },
    });
    fs.files.set('/c.yaml', 'v2');
    expect(() => clock.advance(SECOND)).toThrow('reload blew up');
    fs.files.set('/c.yaml', 'v3');
    clock.advance(SECOND);
    expect(calls).toBe(2);
    watch.stop();
    fs.files.set('/c.yaml', 'v4');
    const readsBefore = fs.reads.length;
    clock.advance(10 * SECOND);
    expect(calls).toBe(2);
    expect(fs.reads.length).toBe(readsBefore);
    expect(clock.pending()).toBe(0);
  });
});

describe('watchConfigFiles on a real Kubernetes-style volume', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('notices the ..data symlink swap by which the kubelet updates a mounted Secret', () => {
    dir = mkdtempSync(join(tmpdir(), 'monapi-watch-'));
    const volume = dir;
    // The kubelet's layout: files are links through ..data to a timestamped folder.
    const version = (name: string, key: string) => {
      mkdirSync(join(volume, name));
      writeFileSync(join(volume, name, 'api-key'), key);
    };
    version('..2026_11_26_10_00_00.1', 'first-key');
    symlinkSync('..2026_11_26_10_00_00.1', join(volume, '..data'));
    symlinkSync('..data/api-key', join(volume, 'api-key'));

    const clock = new FakeClock();
    const changes: (readonly string[])[] = [];
    const keyFile = join(volume, 'api-key');
    watch = watchConfigFiles({ intervalMs: 10 * SECOND, clock, files: () => [keyFile], onChange: (c) => changes.push(c) });
    clock.advance(10 * SECOND);
    expect(changes).toEqual([]);

    // Same size, new content, new folder; ..data replaced atomically by rename.
    version('..2026_11_26_10_01_00.2', 'other-key');
    symlinkSync('..2026_11_26_10_01_00.2', join(volume, '..data_tmp'));
    renameSync(join(volume, '..data_tmp'), join(volume, '..data'));
    rmSync(join(volume, '..2026_11_26_10_00_00.1'), { recursive: true });
    clock.advance(10 * SECOND);
    expect(changes).toEqual([[keyFile]]);
  });
});

describe('configFiles', () => {
  it('names the config file and every key and CA file it names, once each', () => {
    const files = new Map([
      ['/etc/monapi/keys/pro', 'pro-key-0123456789abcdef'],
      ['/etc/monapi/keys/market', 'market-key-0123456789abcdef'],
      ['/etc/monapi/ca.pem', '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'],
    ]);
    const config = parseConfig(
      `accounts:
  - name: pro
    base_url: https://api.example.com/api/v2
    api_key_file: keys/pro
    http: {ca_file: ca.pem}
  - name: business
    base_url: https://api.example.com/api/v2
    api_key_env: BUSINESS_KEY
releases:
  mode: marketplace
  marketplace_base_url: https://market.example.com
  marketplace_key_file: keys/market
  http: {ca_file: /etc/monapi/ca.pem}
`,
      {
        baseDir: '/etc/monapi',
        env: { BUSINESS_KEY: 'business-key-0123456789abcdef' },
        readFile: (path) => {
          const text = files.get(path);
          if (text === undefined) throw new Error(`unexpected read of ${path}`);
          return text;
        },
      },
    );
    expect(configFiles('/etc/monapi/../monapi/monapi.yaml', config)).toEqual([
      '/etc/monapi/monapi.yaml',
      '/etc/monapi/keys/pro',
      '/etc/monapi/ca.pem',
      '/etc/monapi/keys/market',
    ]);
  });
});
