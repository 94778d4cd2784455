import { describe, expect, it } from 'vitest';
import { BackfillFlagError, parseBackfillFlags, type BackfillFlags } from './backfill.js';

const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseBackfillFlags(argv, env, false) as BackfillFlags;
const problem = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
  try {
    parseBackfillFlags(argv, env, false);
  } catch (error) {
    if (error instanceof BackfillFlagError) return error.message;
    throw error;
  }
  return undefined;
};

describe('backfill flags', () => {
  it('takes a file or a remote write URL, never both nor neither', () => {
    expect(parse(['--output=h.om'])).toMatchObject({ output: { kind: 'file', path: 'h.om' }, progressFile: 'h.om.progress.json' });
    expect(parse(['--remote-write.url=http://mimir:8080/api/v1/push'])).toMatchObject({
      output: { kind: 'remote_write', url: 'http://mimir:8080/api/v1/push' },
      progressFile: 'monapi-backfill.progress.json',
    });
    expect(parse([], { MONAPI_BACKFILL_REMOTE_WRITE_URL: 'https://vm:8428/api/v1/write' }).output).toEqual({ kind: 'remote_write', url: 'https://vm:8428/api/v1/write' });
    expect(problem([])).toMatch(/one of --output=<file.om> and --remote-write.url=<url>/);
    expect(problem(['--output=h.om', '--remote-write.url=http://x/api/v1/write'])).toMatch(/one of --output/);
    expect(problem(['--remote-write.url=ftp://x/'])).toMatch(/^--remote-write.url /);
  });

  it('reads where the live counters began from the exporter\'s state file, given as a flag or as the exporter\'s own variable', () => {
    expect(parse(['--output=h.om', '--state.file=/var/lib/monapi/state.json']).stateFile).toBe('/var/lib/monapi/state.json');
    expect(parse(['--output=h.om'], { MONAPI_STATE_FILE: '/data/state.json' }).stateFile).toBe('/data/state.json');
    expect(parse(['--output=h.om']).stateFile).toBeUndefined();
  });

  it('adds labels given as name=value, refusing the ones the exporter sets', () => {
    expect(parse(['--output=h.om', '--label=job=monapi', '--label', 'instance=exporter:9866']).labels).toEqual({ job: 'monapi', instance: 'exporter:9866' });
    expect(parse(['--output=h.om']).labels).toEqual({});
    expect(problem(['--output=h.om', '--label=host_uuid=x'])).toMatch(/--label must be name=value/);
    expect(problem(['--output=h.om', '--label=__name__=x'])).toMatch(/not starting with __/);
    expect(problem(['--output=h.om', '--label=job'])).toMatch(/"job"/);
  });

  it('checks the numbers and times it is given', () => {
    expect(parse(['--output=h.om', '--since=4w', '--chunk-samples=5000', '--until=2026-11-01T00:00:00Z'])).toMatchObject({
      sinceMs: 28 * 86_400_000,
      chunkSamples: 5000,
      untilMs: Date.UTC(2026, 10, 1),
    });
    expect(problem(['--output=h.om', '--since=30s'])).toMatch(/--since must be a duration of at least 1m/);
    expect(problem(['--output=h.om', '--chunk-samples=10'])).toMatch(/--chunk-samples must be a whole number of at least 100/);
    expect(problem(['--output=h.om', '--until=yesterday'])).toMatch(/--until must be an RFC 3339 time/);
  });
});
