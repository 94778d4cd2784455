import { readdirSync, readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { BUILDER_THREAD_NAME } from '../exposition/builder-client.js';
import { BUILDER_NICE_INCREMENT } from '../exposition/builder.js';
import { MetricStore } from '../exposition/store.js';

/** Each thread of this process: its name and nice value, from /proc. */
function threads(): { readonly tid: number; readonly name: string; readonly nice: number }[] {
  return readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: the fields after it start with the state; nice is the 17th of them.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { tid: Number(tid), name: readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim(), nice: Number(fields[16]) };
  });
}

const mainNice = (): number | undefined => threads().find((t) => t.tid === process.pid)?.nice;

// The project runs on Linux (the image, CI); there the nice value is per thread.
describe.runIf(process.platform === 'linux')('thread priority', () => {
  it('lowers the calling thread alone', async () => {
    const before = mainNice();
    const worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       import(workerData.module).then(({ lowerThisThreadsPriority }) => {
         parentPort.postMessage({ problem: lowerThisThreadsPriority(7) ?? null });
         setTimeout(() => {}, 2000);
       });`,
      { eval: true, name: 'monapi-niced', workerData: { module: new URL('./thread-priority.ts', import.meta.url).href }, execArgv: ['--import', 'tsx'] },
    );
    try {
      const answer = await new Promise<{ problem: string | null }>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      expect(answer.problem).toBeNull();
      expect(threads().find((t) => t.name === 'monapi-niced')?.nice).toBe(Math.min(19, (before ?? NaN) + 7));
      expect(mainNice()).toBe(before);
    } finally {
      await worker.terminate();
    }
  });

  it('puts the exposition builder thread behind polling and serving', async () => {
    const store = new MetricStore();
    store.publish('hosts', [{ spec: { name: 'demo_up', type: 'gauge', help: 'Up.' }, samples: [{ labels: {}, value: 1 }] }]);
    await store.flush();
    const builder = threads().find((t) => t.name === BUILDER_THREAD_NAME);
    // Relative to the process: a process started under `nice` keeps its builder below it.
    expect(builder?.nice).toBe(Math.min(19, (mainNice() ?? NaN) + BUILDER_NICE_INCREMENT));
  });
});
