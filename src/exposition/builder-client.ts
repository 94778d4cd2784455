import { Worker, type TransferListItem } from 'node:worker_threads';
import { PendingReplies } from '../lib/pending-replies.js';
import { exposeGarbageCollectionToNewThreads } from '../lib/shared-memory-collector.js';
import type { BuilderMessage, BuilderNotice, BuilderReply, BuildRequest, MemoryRequest } from './builder.js';

/** The builder thread's name, as the system shows it (`top -H`, /proc): Linux keeps 15 characters. */
export const BUILDER_THREAD_NAME = 'monapi-builder';

/**
 * The serving thread's door to the builder thread: one worker for the whole process, started
 * on first use, holding the process open only while a reply is awaited (a store that is never
 * closed must not keep a program alive).
 */

function startWorker(): Worker {
  // The builder thread collects its own heap (src/lib/shared-memory-collector.ts).
  exposeGarbageCollectionToNewThreads();
  const here = new URL(import.meta.url);
  if (here.pathname.endsWith('.ts')) {
    // Running from the TypeScript sources (tests, benchmarks, `npm run exporter`): the worker
    // needs the same loader. A worker's own --import does not apply to its entry module.
    const entry = new URL('./builder-thread.ts', here).href;
    const code = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
    return new Worker(code, { eval: true, name: BUILDER_THREAD_NAME });
  }
  return new Worker(new URL('./builder-thread.js', here), { name: BUILDER_THREAD_NAME });
}

class BuilderClient {
  private worker: Worker | undefined;
  /** Why the thread is gone: the stores' lines went with it, so nothing can be built any more. */
  private lost: Error | undefined;
  private readonly pending = new PendingReplies<BuilderReply>();
  /** What the thread said unasked, for listeners that come later too. */
  private readonly notices: BuilderNotice[] = [];
  private readonly noticeListeners = new Set<(notice: BuilderNotice) => void>();

  /** Calls `listener` with each notice of the thread, those said before included; returns how to stop. */
  onNotice(listener: (notice: BuilderNotice) => void): () => void {
    for (const message of this.notices) listener(message);
    this.noticeListeners.add(listener);
    return () => this.noticeListeners.delete(listener);
  }

  post(message: BuilderMessage, transfer: readonly TransferListItem[] = []): void {
    this.ensure().postMessage(message, transfer);
  }

  request(message: Omit<BuildRequest, 'request'> | Omit<MemoryRequest, 'request'>): Promise<BuilderReply> {
    const worker = this.ensure();
    return this.pending.ask((request) => {
      worker.postMessage({ ...message, request });
      worker.ref();
    });
  }

  private ensure(): Worker {
    if (this.lost) throw this.lost;
    if (this.worker) return this.worker;
    const worker = startWorker();
    worker.unref();
    worker.on('message', (reply: BuilderReply | BuilderNotice) => {
      if (reply.type === 'notice') {
        this.notices.push(reply);
        for (const listener of this.noticeListeners) listener(reply);
        return;
      }
      if (this.pending.answer(reply.request, reply) && this.pending.size === 0) worker.unref();
    });
    const fail = (error: Error): void => {
      this.lost ??= new Error(`the exposition builder thread is gone (${error.message}); /metrics keeps its last body`, { cause: error });
      this.pending.failAll(this.lost);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the exposition builder thread exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }
}

export const builderClient = new BuilderClient();
