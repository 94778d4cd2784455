import type { Host } from '../hosts/decode.js';
import { topic } from '../source.js';

/** `/hosts/{uuid}` answers, by uuid, of the hosts whose list item lacks fields. */
export const HOST_DETAILS = topic<ReadonlyMap<string, Host>>('host_details', 'answers', new Map());
