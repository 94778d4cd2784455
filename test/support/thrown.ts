/**
 * Runs `run` and returns what it threw, when it is an instance of `type`; fails the test
 * when it throws nothing or something else.
 */
export function thrownBy<E extends Error>(type: abstract new (...args: never[]) => E, run: () => unknown): E {
  try {
    run();
  } catch (error) {
    if (error instanceof type) return error;
    throw error;
  }
  throw new Error(`expected ${type.name} to be thrown`);
}

/** Awaits `promise` and returns its rejection when it is an instance of `type`; fails the test otherwise. */
export async function rejectionOf<E extends Error>(type: abstract new (...args: never[]) => E, promise: Promise<unknown>): Promise<E> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (outcome instanceof type) return outcome;
  throw outcome instanceof Error ? outcome : new Error(`expected ${type.name} to be thrown`);
}
