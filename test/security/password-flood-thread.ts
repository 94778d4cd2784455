import { parentPort, workerData } from 'node:worker_threads';
import { wrongPasswordFlood, type Target } from './flood-clients.js';

/** The thread of `wrongPasswordFloodOnThread`: sends the wrong passwords, reports what came back. */
const data = workerData as { target: Target; path: string; keepAlive: number; fresh: number; maxRequests: number };
const flood = wrongPasswordFlood(data.target, data.path, data.keepAlive, data.fresh, data.maxRequests);
parentPort?.on('message', (message: { type: 'stop' }) => {
  if (message.type !== 'stop') return;
  void flood.stop().then(() => parentPort?.postMessage({ statuses: [...flood.statuses], retryAfter: [...flood.retryAfter] }));
});
