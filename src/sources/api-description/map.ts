import type { FamilySamples } from '../../exposition/model.js';
import { FamilyCollector, gaugeSpec, infoSpec } from '../shared/families.js';
import type { ApiDescription } from './decode.js';

const FROM = 'from /openapi.json, polled in the background';

export const API_DESCRIPTION_FAMILIES = {
  info: infoSpec(
    'monapi_upstream_api_info',
    `The API as the service describes itself (value 1): its title, its version and the OpenAPI version of the description; a change of version is worth a look at the exporter's decoding, ${FROM}.`,
  ),
  paths: gaugeSpec('monapi_upstream_api_paths', `Route templates the service's description lists, ${FROM}.`),
} as const;

/** Maps the service's description of itself to an info series and its count of routes. Pure. */
export function mapApiDescription(description: ApiDescription, account: string): FamilySamples[] {
  const c = new FamilyCollector();
  c.add(API_DESCRIPTION_FAMILIES.info, { account, title: description.title ?? '', version: description.version ?? '', openapi: description.openapi }, 1);
  c.add(API_DESCRIPTION_FAMILIES.paths, { account }, description.paths.length);
  return c.toFamilies();
}
