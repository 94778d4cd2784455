/**
 * The simulated Release Lookup API: the free public endpoint and the marketplace endpoints,
 * as two express apps the simulator mounts on their own listeners.
 */
export { createReleasesApp, FREE_CACHE_TTL_MS, FREE_DEFAULT_RATE_PER_MINUTE, type ReleasesAppOptions } from './free-app.js';
export {
  createMarketplaceApp,
  MARKETPLACE_DEFAULT_RATE_PER_MINUTE,
  MARKETPLACE_HOST_HEADER,
  MARKETPLACE_KEY_HEADER,
  type MarketplaceAppOptions,
} from './marketplace-app.js';
export {
  RELEASE_CATALOGUE,
  type CodeHost,
  type ReleaseKind,
  type SimAssetTemplate,
  type SimProject,
  type SimRelease,
} from './catalogue.js';
export {
  formatTagDate,
  fullName,
  projectUrl,
  publishRelease,
  releaseRecord,
  ReleaseStore,
  resolveProject,
  sharedReleaseStore,
  type PublishOptions,
} from './store.js';
