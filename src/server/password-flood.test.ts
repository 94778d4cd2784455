import bcrypt from 'bcryptjs';
import { describe, expect, it } from 'vitest';
import { until } from '../../test/support/until.js';
import { FailureThrottle, KnownGoodCredentials, PasswordVerifier, type VerifyOptions } from './password-check.js';
import { BasicAuthChecker, ThrottledPasswordGate, type AuthOutcome } from './web-config.js';

/**
 * A right password always gets in: during a flood of wrong passwords from 300 addresses, the
 * first login of Prometheus after a restart (nothing known yet) or a password rotation is
 * checked, not told to come back. Addresses are the checker's input, not sockets.
 */

const header = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const OLD_HASH = bcrypt.hashSync('old-s3cret', 10);
const NEW_HASH = bcrypt.hashSync('new-s3cret', 10);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Counts the bcrypt checks it is asked for. */
class CountingVerifier extends PasswordVerifier {
  asked = 0;
  override verify(password: string, hash: string, options?: VerifyOptions): Promise<boolean> | undefined {
    this.asked++;
    return super.verify(password, hash, options);
  }
}

/** Each address sends wrong passwords back to back; a 429 is answered a second late, as the server does. */
function flood(auth: () => BasicAuthChecker, verifier: PasswordVerifier, addresses: number) {
  let stopped = false;
  const outcomes = { denied: 0, throttled: 0 };
  const loops = Array.from({ length: addresses }, async (_, i) => {
    const address = `198.51.${Math.floor(i / 250)}.${i % 250}`;
    while (!stopped) {
      const outcome = await auth()
        .check(header('prometheus', `guess-${i}`), address)
        .catch(() => undefined);
      if (outcome === 'denied') outcomes.denied++;
      else if (typeof outcome === 'object') {
        outcomes.throttled++;
        await sleep(1_000);
      }
    }
  });
  return {
    outcomes,
    stop: async () => {
      stopped = true;
      // Closing rejects the checks still waiting: the flood's loops end at once.
      await verifier.close();
      await Promise.all(loops);
    },
  };
}

async function timed(check: Promise<AuthOutcome>): Promise<{ outcome: AuthOutcome; ms: number }> {
  const started = performance.now();
  const outcome = await check;
  return { outcome, ms: performance.now() - started };
}

describe('a right password during a flood of wrong ones', () => {
  it('gets in at the first try after a restart and after a rotation; its concurrent scrapes share one check', async () => {
    const verifier = new CountingVerifier();
    const throttle = new FailureThrottle();
    const knownGood = new KnownGoodCredentials();
    const gate = new ThrottledPasswordGate(verifier, throttle);
    let auth = new BasicAuthChecker(new Map([['prometheus', OLD_HASH]]), gate, knownGood);
    const attack = flood(() => auth, verifier, 300);
    try {
      // Every address has failed or been told to retry; the queues are as full as they can make them.
      await until(
        'the flood to fill the queues',
        () => (attack.outcomes.denied > 0 && attack.outcomes.throttled > 100 && verifier.pending > 16 ? true : undefined),
        20_000,
        50,
      );

      const restart = await timed(auth.check(header('prometheus', 'old-s3cret'), '10.0.0.9'));
      expect(restart.outcome).toBe('ok');
      // Known good from now on: no throttle, no queue, no bcrypt.
      const asked = verifier.asked;
      expect(await auth.check(header('prometheus', 'old-s3cret'), '10.0.0.9')).toBe('ok');
      expect(verifier.asked).toBe(asked);

      // The web configuration is reloaded with a new hash; Prometheus tries the old password once, then four scrapes at once with the new one.
      auth = new BasicAuthChecker(new Map([['prometheus', NEW_HASH]]), gate, knownGood);
      expect(await auth.check(header('prometheus', 'old-s3cret'), '10.0.0.9')).toBe('denied');
      const rotation = await Promise.all(Array.from({ length: 4 }, () => timed(auth.check(header('prometheus', 'new-s3cret'), '10.0.0.9'))));
      expect(rotation.map((r) => r.outcome)).toEqual(['ok', 'ok', 'ok', 'ok']);
      console.info(
        `first right login during a flood from 300 addresses: after a restart ${restart.ms.toFixed(0)} ms, after a rotation ${Math.max(...rotation.map((r) => r.ms)).toFixed(0)} ms`,
      );
    } finally {
      await attack.stop();
    }
  }, 30_000);

  it('checks identical credentials sent at once (within the address allowance of 5) only once', async () => {
    const verifier = new CountingVerifier();
    try {
      const auth = new BasicAuthChecker(new Map([['prometheus', OLD_HASH]]), new ThrottledPasswordGate(verifier, new FailureThrottle()));
      const outcomes = await Promise.all(Array.from({ length: 5 }, () => auth.check(header('prometheus', 'old-s3cret'), '10.0.0.9')));
      expect(outcomes).toEqual(Array.from({ length: 5 }, () => 'ok'));
      expect(verifier.asked).toBe(1);
    } finally {
      await verifier.close();
    }
  });

  it('one address cannot fill the queue of the others: its checks wait or are refused, another address is checked', async () => {
    const small = new PasswordVerifier(1, 4, 2);
    try {
      const held = Array.from({ length: 6 }, () => small.verify('wrong', OLD_HASH, { address: '203.0.113.1', standing: 2 }));
      expect(held.filter((p) => p === undefined)).toHaveLength(4);
      const other = small.verify('old-s3cret', OLD_HASH, { address: '203.0.113.2', standing: 1 });
      expect(other).toBeDefined();
      expect(await other).toBe(true);
      expect(await Promise.all(held.filter((p) => p !== undefined))).toEqual([false, false]);
    } finally {
      await small.close();
    }
  });
});
