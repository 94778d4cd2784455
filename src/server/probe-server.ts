import { parseListenAddress } from './listen.js';
import { startThread } from './thread.js';

/**
 * `--web.probe-listen-address`: a second, plain-HTTP listener that serves only `/-/healthy` and
 * `/-/ready`, never behind TLS or a password, for kubelet. It runs on a thread of its own, so a
 * probe is answered within milliseconds whatever the event loop is doing (a large /metrics, a
 * flood of connections or of wrong passwords on the main port), and it reports unhealthy only
 * when the event loop has been silent for `stallLimitMs`: stuck rather than busy.
 */

export interface ProbeThreadData {
  readonly host: string | undefined;
  readonly port: number;
  readonly stallLimitMs: number;
}

export type ProbeMessage = { readonly type: 'state'; readonly ready: boolean; readonly reason: string } | { readonly type: 'close' };
export type ProbeReply = { readonly type: 'listening'; readonly port: number } | { readonly type: 'error'; readonly message: string };

export interface ProbeState {
  ready(): boolean;
  /** Why not ready, shown by /-/ready; scrubbed by the caller. */
  reason(): string;
}

export interface RunningProbeServer {
  readonly url: string;
  close(): Promise<void>;
}

/** How often the event loop tells the probe thread it is alive, and how ready it is. */
const BEAT_MS = 250;
/** Silence after which /-/healthy says unhealthy: far beyond any stall of a busy but working exporter. */
export const DEFAULT_STALL_LIMIT_MS = 60_000;

export async function startProbeServer(listenAddress: string, state: ProbeState, stallLimitMs = DEFAULT_STALL_LIMIT_MS): Promise<RunningProbeServer> {
  const { host, port } = parseListenAddress(listenAddress);
  const worker = startThread(import.meta.url, 'probe-thread', 'monapi-probe-listener', { host, port, stallLimitMs } satisfies ProbeThreadData);
  const bound = await new Promise<number>((resolve, reject) => {
    const fail = (error: Error) => reject(new Error(`cannot listen on ${listenAddress} (probes): ${error.message}`, { cause: error }));
    worker.once('error', fail);
    worker.once('message', (reply: ProbeReply) => {
      worker.off('error', fail);
      if (reply.type === 'listening') resolve(reply.port);
      else fail(new Error(reply.message));
    });
  }).catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });
  const beat = () => {
    let ready = false;
    let reason = 'unknown';
    try {
      ready = state.ready();
      reason = ready ? '' : state.reason();
    } catch (error) {
      reason = error instanceof Error ? error.message : String(error);
    }
    worker.postMessage({ type: 'state', ready, reason } satisfies ProbeMessage);
  };
  beat();
  const timer = setInterval(beat, BEAT_MS);
  timer.unref();
  // The listener must not keep the process alive on its own: the exporter's main server does.
  worker.unref();
  const urlHost = host === undefined ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${bound}`,
    close() {
      closing ??= (async () => {
        clearInterval(timer);
        const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        worker.postMessage({ type: 'close' } satisfies ProbeMessage);
        const force = setTimeout(() => void worker.terminate(), 1_000);
        force.unref();
        await exited;
        clearTimeout(force);
      })();
      return closing;
    },
  };
}
