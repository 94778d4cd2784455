import { describe, expect, it } from 'vitest';
import { BudgetClosedError } from '../budget/request-budget.js';
import { InvalidResponseError, NetworkError, NotFoundError, PlanRequiredError, RateLimitedError, ServerError, TimeoutError, UnauthorizedError, BadRequestError } from '../upstream/http/errors.js';
import { failingSources, reasonOf, sourceHealth, type RunRecord } from './source-health.js';

const ctx = { api: 'monitoring' as const, endpoint: '/hosts' };

describe('reasonOf', () => {
  it.each<[string, unknown, string]>([
    ['401', new UnauthorizedError(ctx, 'no', 401), 'unauthorized'],
    ['403 plan_required', new PlanRequiredError(ctx, 'upgrade', 'https://x/upgrade'), 'plan_required'],
    ['404', new NotFoundError(ctx, 'gone', 404), 'not_found'],
    ['429', new RateLimitedError(ctx, 'slow down', '5'), 'rate_limited'],
    ['400', new BadRequestError(ctx, 'bad', 400), 'bad_request'],
    ['5xx', new ServerError(ctx, 'boom', 502), 'http_5xx'],
    ['timeout', new TimeoutError(ctx, 'slow'), 'timeout'],
    ['network', new NetworkError(ctx, 'refused'), 'network'],
    ['a body that cannot be decoded', new InvalidResponseError(ctx, 'no list', []), 'decode_error'],
    ['the budget closing at shutdown', new BudgetClosedError('a', '/hosts'), 'network'],
    ['a bug', new TypeError('x is undefined'), 'internal'],
  ])('%s → %s', (_name, error, reason) => {
    expect(reasonOf(error)).toBe(reason);
  });
});

const run = (ok: boolean, reason: RunRecord['reason'], atMs: number, target?: string): RunRecord => ({ ok, reason, atMs, message: ok ? '' : `${reason} at ${atMs}`, target });

describe('sourceHealth', () => {
  const jobs = [
    { id: 'hosts', source: 'hosts' },
    { id: 'series/a', source: 'series' },
    { id: 'series/b', source: 'series' },
    { id: 'series/c', source: 'series' },
    { id: 'account', source: 'account' },
  ];

  it('is up when every job\'s last run worked, pending before any ran, up with no jobs at all', () => {
    const runs = new Map([['hosts', run(true, '', 1)]]);
    expect(sourceHealth(['hosts', 'account', 'checks'], jobs, runs)).toEqual([
      { source: 'hosts', up: true, reason: '', targets: 1, failing: 0, lastError: undefined },
      { source: 'account', up: false, reason: 'pending', targets: 1, failing: 0, lastError: undefined },
      { source: 'checks', up: true, reason: '', targets: 0, failing: 0, lastError: undefined },
    ]);
  });

  it('is down while any job fails, with the reason most failing jobs share and the latest error', () => {
    const runs = new Map([
      ['series/a', run(false, 'timeout', 5, 'a')],
      ['series/b', run(false, 'not_found', 9, 'b')],
      ['series/c', run(false, 'timeout', 7, 'c')],
    ]);
    expect(sourceHealth(['series'], jobs, runs)).toEqual([
      { source: 'series', up: false, reason: 'timeout', targets: 3, failing: 3, lastError: { target: 'b', atMs: 9, message: 'not_found at 9' } },
    ]);
  });

  it('on a tie takes the latest failure\'s reason; recovers when the failing job works again', () => {
    const runs = new Map([
      ['series/a', run(false, 'timeout', 5, 'a')],
      ['series/b', run(false, 'decode_error', 9, 'b')],
      ['series/c', run(true, '', 7, 'c')],
    ]);
    expect(sourceHealth(['series'], jobs, runs)[0]).toMatchObject({ up: false, reason: 'decode_error', failing: 2 });
    runs.set('series/a', run(true, '', 10, 'a'));
    runs.set('series/b', run(true, '', 11, 'b'));
    expect(sourceHealth(['series'], jobs, runs)[0]).toMatchObject({ up: true, reason: '', failing: 0 });
  });

  it('lists the failing sources for the landing page, with the upgrade URL after plan_required', () => {
    const runs = new Map([
      ['hosts', run(false, 'plan_required', 3)],
      ['series/a', run(true, '', 3, 'a')],
    ]);
    expect(failingSources('acme', sourceHealth(['hosts', 'series', 'account'], jobs, runs), 'https://x/upgrade')).toEqual([
      { account: 'acme', source: 'hosts', reason: 'plan_required', failing: 1, targets: 1, message: 'plan_required at 3', upgradeUrl: 'https://x/upgrade' },
    ]);
  });
});
