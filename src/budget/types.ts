/** The gate the request budget implements; the clients declare it (src/upstream/http/gate.ts). */
export type { Priority, RequestGate } from '../upstream/http/gate.js';
