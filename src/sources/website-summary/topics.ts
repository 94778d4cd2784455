import type { WebsiteSummary } from '../websites/decode.js';
import { topic } from '../source.js';

/** `/websites/{id}` answers, by website id. */
export const WEBSITE_SUMMARIES = topic<ReadonlyMap<number, WebsiteSummary>>('website_summary', 'answers', new Map());
