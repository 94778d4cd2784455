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
