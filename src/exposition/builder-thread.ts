import { getHeapStatistics } from 'node:v8';
import { parentPort, type MessagePort } from 'node:worker_threads';
import { lowerThisThreadsPriority } from '../lib/thread-priority.js';
import { systemClock } from '../lib/clock.js';
import { CollectionBetweenBuilds, garbageCollection, noCollectionWarning, SharedMemoryCollector } from '../lib/shared-memory-collector.js';
import { BodyBuilder, BUILDER_NICE_INCREMENT, type BuilderMessage, type BuilderNotice, type BuilderReply, type ChunksMessage } from './builder.js';

/**
 * The builder thread: lays out and compresses the exposition bodies of every MetricStore of
 * the process (see builder.ts), so that the event loop serving scrapes and polling never
 * does. Started by builder-client.ts.
 */

const port = parentPort;
if (!port) throw new Error('builder-thread.ts runs as a worker thread (see builder-client.ts)');
const stores = new Map<number, BodyBuilder>();
/** Per store: the serving threads' ports its chunks go to. */
const chunkPorts = new Map<number, Set<MessagePort>>();

// Builds are background work: polling and the scrapes go first when the cores are busy (docs/exposition.md#the-builder-thread).
const notLowered = lowerThisThreadsPriority(BUILDER_NICE_INCREMENT);
port.postMessage(
  (notLowered === undefined
    ? { type: 'notice', level: 'debug', message: `the exposition builder thread runs ${BUILDER_NICE_INCREMENT} nice steps below the rest of the process` }
    : {
        type: 'notice',
        // Elsewhere than on Linux there is nothing to set: as designed, not a problem.
        level: process.platform === 'linux' ? 'warn' : 'info',
        message: `the exposition builder thread runs at the process's priority, so builds compete with polling and scrapes for the CPU: ${notLowered}`,
      }) satisfies BuilderNotice,
);

const gcForSharedMemory = garbageCollection();
if ('unavailable' in gcForSharedMemory) {
  port.postMessage({ type: 'notice', level: 'warn', message: noCollectionWarning('builder thread', gcForSharedMemory.unavailable) } satisfies BuilderNotice);
}
const sharedMemory = 'collect' in gcForSharedMemory ? new SharedMemoryCollector(gcForSharedMemory.collect) : undefined;
const collections = sharedMemory ? new CollectionBetweenBuilds(sharedMemory, systemClock) : undefined;

function storeOf(id: number): BodyBuilder {
  let builder = stores.get(id);
  if (!builder) {
    builder = new BodyBuilder((dropped, held) => sharedMemory?.dropped(dropped, held));
    stores.set(id, builder);
  }
  return builder;
}

function reply(message: BuilderReply): void {
  // The bodies are SharedArrayBuffers: posting shares them, nothing is copied.
  port?.postMessage(message);
}

port.on('message', (message: BuilderMessage) => {
  switch (message.type) {
    case 'family':
      storeOf(message.store).setFamily(message);
      return;
    case 'drop-family':
      storeOf(message.store).dropFamily(message.id);
      return;
    case 'group':
      storeOf(message.store).putGroup(message);
      return;
    case 'retract':
      storeOf(message.store).removeGroup(message.name);
      return;
    case 'forget-chunks':
      storeOf(message.store).forgetChunks();
      return;
    case 'memory':
      if (message.collectGarbage && 'collect' in gcForSharedMemory) gcForSharedMemory.collect();
      reply({ type: 'memory', request: message.request, heapUsed: getHeapStatistics().used_heap_size });
      return;
    case 'chunk-port': {
      const ports = chunkPorts.get(message.store) ?? new Set<MessagePort>();
      chunkPorts.set(message.store, ports);
      ports.add(message.port);
      // Closed when the serving thread ends.
      message.port.once('close', () => ports.delete(message.port));
      message.port.unref();
      // Those of the last build, which the main thread may not have shown yet: tagged with it, so they are kept until a snapshot as new shows.
      const builder = storeOf(message.store);
      message.port.postMessage({ type: 'chunks', build: builder.lastBuild, chunks: builder.heldChunks() } satisfies ChunksMessage);
      return;
    }
    case 'build': {
      collections?.buildAsked();
      let built: BuilderReply;
      try {
        built = storeOf(message.store).build(message.request, message.gzipLevel);
      } catch (error) {
        built = { type: 'failed', request: message.request, message: error instanceof Error ? error.stack ?? error.message : String(error) };
      }
      const ports = chunkPorts.get(message.store);
      if (built.type === 'built' && built.changed && ports) {
        const sent: ChunksMessage = { type: 'chunks', build: built.request, chunks: built.chunks };
        for (const chunkPort of ports) chunkPort.postMessage(sent);
        built = { ...built, chunks: [] };
      }
      reply(built);
      collections?.buildReplied();
      return;
    }
  }
});
