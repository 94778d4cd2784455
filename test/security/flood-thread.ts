import { parentPort, workerData } from 'node:worker_threads';
import { holdIdleConnections, type Target } from './flood-clients.js';

/** The thread of `holdIdleConnectionsOnThread`: holds the connections, answers counts. */
const data = workerData as { port: number; count: number; options: { reopenPerSecond?: number; tls?: Target['tls'] } };
const flood = holdIdleConnections(data.port, data.count, data.options);
parentPort?.on('message', (message: { id: number; type: 'open' | 'opened' | 'stop' }) => {
  if (message.type === 'stop') flood.stop();
  const value = message.type === 'opened' ? flood.opened() : flood.open();
  parentPort?.postMessage({ id: message.id, value });
});
