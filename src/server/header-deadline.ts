import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Cuts a connection that has not sent complete request headers within `timeoutMs` of
 * connecting, or of its last response ending (a kept-alive connection), with a 408.
 *
 * Node has the same limit (`headersTimeout`, checked every `connectionsCheckingInterval`), and
 * it stays set; but with 200 keep-alive scrapers hammering the server, its list of active
 * connections was seen to let 500 slowloris connections live for 30 s and more
 * (test/security/abuse.test.ts failed that way about one run in two). One timer per connection
 * does not depend on that list.
 */
export function enforceHeaderDeadline(server: Server, timeoutMs: number, connectionEvent: 'connection' | 'secureConnection'): void {
  const connections = new WeakMap<Socket, { timer?: NodeJS.Timeout; pending: number }>();
  const arm = (socket: Socket, state: { timer?: NodeJS.Timeout; pending: number }) => {
    clearTimeout(state.timer);
    state.timer = setTimeout(() => cut(socket), timeoutMs);
    state.timer.unref();
  };
  server.on(connectionEvent, (socket: Socket) => {
    const state = { pending: 0 };
    connections.set(socket, state);
    arm(socket, state);
    socket.once('close', () => clearTimeout(connections.get(socket)?.timer));
  });
  server.on('request', (req, res) => {
    const socket = req.socket;
    const state = connections.get(socket);
    if (state === undefined) return;
    clearTimeout(state.timer);
    state.pending++;
    res.once('close', () => {
      state.pending--;
      if (state.pending === 0 && !socket.destroyed) arm(socket, state);
    });
  });
}

function cut(socket: Socket): void {
  if (socket.destroyed) return;
  // Written like Node's own 408: the socket buffer is empty, so this leaves before destroy.
  if (socket.writable) socket.write('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
  socket.destroy();
}
