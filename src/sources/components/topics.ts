import { topic } from '../source.js';
import type { Component } from './decode.js';

/** Each polled host's detected components, by host uuid (the outdated check reads every account's). */
export const HOST_COMPONENTS = topic<ReadonlyMap<string, readonly Component[]>>('components', 'by_host', new Map());
