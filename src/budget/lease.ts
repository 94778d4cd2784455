/**
 * A lease on spending, written ahead to the state file (src/state/keeper.ts grants it): a
 * save records that a budget which asked for the lease may have spent everything it could
 * until the end of the lease, and the budget spends nothing past the end of its lease until a
 * later save has extended it. So whenever the process dies, the state file bounds what it
 * spent, and a restart never spends what the upstream has not given back (see
 * `RequestBudget.persistentState`).
 */
export interface SpendLease {
  /** While a save is being collected: the time its lease reaches; undefined otherwise. */
  writing(): number | undefined;
  /** Spending was done or is wanted: the next regular save must extend the lease. */
  touch(): void;
  /** The lease ran out with requests waiting: save now. */
  request(): void;
  /** Called after every save (written or failed: a full disk must not stop polling). Returns an unsubscribe. */
  onSaved(listener: () => void): () => void;
}
