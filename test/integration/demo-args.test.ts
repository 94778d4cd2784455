import { describe, expect, it } from 'vitest';
import { parseDemoArgs } from '../../scripts/demo.js';
import { defaultServingThreads } from '../../src/server/serving-threads.js';

describe('npm run demo flags', () => {
  it.each([
    [[], defaultServingThreads()],
    [['--web.serving-threads', 'auto'], defaultServingThreads()],
    [['--web.serving-threads', '0'], 0],
    [['--web.serving-threads', '3'], 3],
  ])('serves scrapes from the threads a deployed exporter would use: %j gives %i', (argv, threads) => {
    const options = parseDemoArgs(argv);
    if (options === 'help') throw new Error('no help was asked for');
    expect(options.servingThreads).toBe(threads);
  });

  it.each([['-1'], ['two'], ['33'], ['1.5']])('refuses --web.serving-threads %s, naming the flag', (value) => {
    expect(() => parseDemoArgs([`--web.serving-threads=${value}`])).toThrow(`--web.serving-threads must be auto or a whole number from 0 to 32, got "${value}"`);
  });
});
