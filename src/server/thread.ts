import { Worker } from 'node:worker_threads';
import { exposeGarbageCollectionToNewThreads } from '../lib/shared-memory-collector.js';

/**
 * Starts a worker thread from a module beside the caller: `./password-thread.js` in the built
 * program, its `.ts` source when running from the sources (tests, `npm run exporter`), where
 * the worker needs the same loader (a worker's own --import does not apply to its entry
 * module). As src/exposition/builder-client.ts does for the builder thread.
 */
export function startThread(caller: string, module: string, name: string, workerData?: unknown): Worker {
  // The serving threads collect their own heaps (src/lib/shared-memory-collector.ts).
  exposeGarbageCollectionToNewThreads();
  const here = new URL(caller);
  if (here.pathname.endsWith('.ts')) {
    const entry = new URL(`./${module}.ts`, here).href;
    const code = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
    return new Worker(code, { eval: true, name, workerData });
  }
  return new Worker(new URL(`./${module}.js`, here), { name, workerData });
}
