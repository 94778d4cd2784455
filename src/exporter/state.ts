import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '../lib/clock.js';
import { StateKeeper } from '../state/keeper.js';
import { loadStateFile, type AccountState } from '../state/state-file.js';

/**
 * `--state.file`: what was saved last time (each unit continues from its own part, when it
 * still polls the same upstream), and the keeper that saves from now on.
 */
export function openStateFile(path: string, clock: Clock, log: Logger, registry: Registry, collect: () => Record<string, AccountState>) {
  let restored: Readonly<Record<string, AccountState>> = {};
  const loaded = loadStateFile(path, clock.now());
  if (loaded.kind === 'set_aside') {
    log.warn({ stateFile: path, reason: loaded.reason, movedTo: loaded.movedTo }, 'the state file cannot be used and was set aside; counters start afresh (nothing is counted twice)');
  } else if (loaded.kind === 'loaded') {
    restored = loaded.snapshot.accounts;
    log.info({ stateFile: path, savedAt: new Date(loaded.snapshot.savedAtMs).toISOString(), accounts: Object.keys(restored) }, 'restored cursors and counter totals from the state file');
  }
  return {
    keeper: new StateKeeper({ path, clock, log, registry, collect }),
    restoredFor(unit: string, baseUrl: string): AccountState | undefined {
      const saved = restored[unit];
      return saved !== undefined && saved.baseUrl === baseUrl ? saved : undefined;
    },
  };
}
