import { topic } from '../source.js';
import type { Website } from './decode.js';

/**
 * Websites the per-website sources poll: those the website filters select, paused ones
 * (`enabled: false`) included: they are asked for no checks, but a paused website's
 * certificate still expires, and its summary says when.
 */
export const SELECTED_WEBSITES = topic<ReadonlyMap<string, Website>>('websites', 'selected', new Map());
