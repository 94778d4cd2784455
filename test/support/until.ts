/**
 * Polls `probe` until it gives a value, then returns it; a probe that throws is tried again,
 * its error kept for the timeout's message, which names `what` was awaited.
 */
export async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000, everyMs = 250): Promise<T> {
  const end = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${lastError === undefined ? '' : `: ${lastError instanceof Error ? lastError.message : JSON.stringify(lastError)}`}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
