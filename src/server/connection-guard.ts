import type { Server } from 'node:http';
import type { Server as NetServer, Socket } from 'node:net';

/**
 * Keeps idle connections from starving the ones that have work. Node's `maxConnections`
 * counts raw TCP connections and refuses new ones at the cap: one client holding 2,100 idle
 * connections took every slot, and health probes and scrapes were refused. Here a
 * connection is idle from the moment it is accepted until a request arrives on it, and again
 * from the end of each response; busy while a request is in flight.
 *
 * - Past `evictAt` open connections, each new one closes the connection idle the longest.
 * - At `maxConnections`, a new one is refused when none can be closed.
 * - One address may hold at most `maxPerAddress`; beyond, a new one from it closes that
 *   address's longest-idle connection, or is refused when none can be closed.
 *
 * Only a connection idle for at least `minIdleMs` is closed to make room: every connection
 * gets that long to send its request (a TLS handshake included), however many arrive after it.
 * A probe or a scrape sends its request at once, so the connections closed are the ones that
 * sit idle: never one with a request in flight, never one just accepted.
 */

export interface ConnectionLimits {
  readonly maxConnections: number;
  /** Open connections past which each new one closes the longest-idle one. */
  readonly evictAt: number;
  readonly maxPerAddress: number;
  /** A connection idle for less than this is never closed to make room. Default 0.5 s. */
  readonly minIdleMs?: number;
}

export type ClosedReason = 'idle_evicted' | 'address_idle_evicted' | 'refused_full' | 'refused_address';

export interface ConnectionGuard {
  /** Open connections now, and per address (for tests and /status). */
  readonly open: number;
  openFrom(address: string): number;
  /** Stops tracking (the server is closing). */
  stop(): void;
}

interface Connection {
  readonly socket: Socket;
  readonly address: string;
  /** Requests in flight on it. */
  busy: number;
  idleSince: number;
}

interface AddressEntry {
  readonly connections: Set<Connection>;
  /** Idle ones, longest-idle first (a Map keeps insertion order). */
  readonly idle: Map<Connection, true>;
}

/** The raw TCP socket under a TLS one (Node keeps it as `_parent`), so both events find one record. */
function rawSocketOf(socket: Socket): Socket {
  return (socket as Socket & { _parent?: Socket })._parent ?? socket;
}

// Long: the bookkeeping of open and idle connections is one closure over the server's sockets, shared by both listeners.
export function guardConnections(server: Server | NetServer, limits: ConnectionLimits, onClosed?: (reason: ClosedReason) => void): ConnectionGuard {
  if (!(limits.evictAt > 0 && limits.evictAt <= limits.maxConnections && limits.maxPerAddress > 0)) {
    throw new RangeError(`connection limits must satisfy 0 < evictAt <= maxConnections and maxPerAddress > 0, got ${JSON.stringify(limits)}`);
  }
  const bySocket = new WeakMap<Socket, Connection>();
  const idle = new Map<Connection, true>();
  const addresses = new Map<string, AddressEntry>();
  let open = 0;
  let stopped = false;

  const entryOf = (address: string): AddressEntry => {
    let entry = addresses.get(address);
    if (!entry) addresses.set(address, (entry = { connections: new Set(), idle: new Map() }));
    return entry;
  };
  const minIdleMs = limits.minIdleMs ?? 500;
  const markIdle = (c: Connection) => {
    c.idleSince = Date.now();
    idle.delete(c);
    idle.set(c, true);
    const entry = entryOf(c.address);
    entry.idle.delete(c);
    entry.idle.set(c, true);
  };
  const markBusy = (c: Connection) => {
    idle.delete(c);
    addresses.get(c.address)?.idle.delete(c);
  };
  const forget = (c: Connection) => {
    idle.delete(c);
    const entry = addresses.get(c.address);
    if (!entry) return;
    if (entry.connections.delete(c)) open--;
    entry.idle.delete(c);
    if (entry.connections.size === 0) addresses.delete(c.address);
  };
  const close = (c: Connection, reason: ClosedReason) => {
    forget(c);
    c.socket.destroy();
    onClosed?.(reason);
  };
  /** The longest-idle connection of `map`, if it has been idle long enough to be closed. */
  const evictable = (map: Map<Connection, true>): Connection | undefined => {
    const oldest: Connection | undefined = map.keys().next().value;
    return oldest !== undefined && Date.now() - oldest.idleSince >= minIdleMs ? oldest : undefined;
  };

  const onConnection = (socket: Socket) => {
    if (stopped) return;
    const address = socket.remoteAddress ?? 'unknown';
    const entry = entryOf(address);
    if (entry.connections.size >= limits.maxPerAddress) {
      const victim = evictable(entry.idle);
      if (!victim) {
        if (entry.connections.size === 0) addresses.delete(address);
        socket.destroy();
        onClosed?.('refused_address');
        return;
      }
      close(victim, 'address_idle_evicted');
    }
    if (open >= limits.evictAt) {
      const victim = evictable(idle);
      if (victim) close(victim, 'idle_evicted');
      else if (open >= limits.maxConnections) {
        if (entry.connections.size === 0) addresses.delete(address);
        socket.destroy();
        onClosed?.('refused_full');
        return;
      }
    }
    const connection: Connection = { socket, address, busy: 0, idleSince: 0 };
    bySocket.set(socket, connection);
    entryOf(address).connections.add(connection);
    open++;
    markIdle(connection);
    socket.once('close', () => forget(connection));
  };

  const onRequest = (req: { socket: Socket }, res: { once(event: 'close', listener: () => void): unknown }) => {
    const connection = bySocket.get(rawSocketOf(req.socket));
    if (!connection) return;
    connection.busy++;
    markBusy(connection);
    res.once('close', () => {
      connection.busy--;
      if (connection.busy === 0 && !connection.socket.destroyed) markIdle(connection);
    });
  };

  server.on('connection', onConnection);
  server.on('request', onRequest);
  return {
    get open() {
      return open;
    },
    openFrom: (address) => addresses.get(address)?.connections.size ?? 0,
    stop() {
      stopped = true;
      server.off('connection', onConnection);
      server.off('request', onRequest);
    },
  };
}
