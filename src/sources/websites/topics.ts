import { topic } from '../source.js';
import type { Website } from './decode.js';

/** Websites the per-website sources poll: selected by the website filters, and checked upstream (not `enabled: false`). */
export const POLLED_WEBSITES = topic<ReadonlyMap<string, Website>>('websites', 'polled', new Map());
