import { topic } from '../source.js';

/** The metric names to fetch per host, after the metric filters (from each host's catalogue). */
export const METRIC_NAMES = topic<ReadonlyMap<string, readonly string[]>>('metric_catalogue', 'names', new Map());
