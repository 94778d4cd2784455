import { topic } from '../source.js';
import type { Host, HostDetailField } from './decode.js';

/**
 * A host as the per-host sources see it: the `/hosts` item completed from `/hosts/{uuid}`
 * where the list lacks fields, with what the polling needs resolved (see map.ts
 * `inventoryHost`).
 */
export interface InventoryHost extends Host {
  readonly hostname: string;
  /** Upstream's `online`, else derived from `last_seen` (the document's 3 minutes), else true. */
  readonly online: boolean;
  readonly tags: readonly string[];
}

/** The hosts per-host sources poll: listed, within the plan (`allowed`), selected by the host filters. */
export const POLLED_HOSTS = topic<ReadonlyMap<string, InventoryHost>>('hosts', 'polled', new Map());

/** Listed hosts (within the plan) whose list item lacks fields `/hosts/{uuid}` may have. */
export const HOSTS_LACKING = topic<ReadonlyMap<string, { readonly host: Host; readonly missing: readonly HostDetailField[] }>>('hosts', 'lacking', new Map());
