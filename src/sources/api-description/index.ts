import { HOUR } from '../../config/schema.js';
import { endpoint } from '../../upstream/monitoring/client.js';
import { every, familyNames, groupName, type MonitoringSource } from '../source.js';
import { decodeApiDescription } from './decode.js';
import { API_DESCRIPTION_FAMILIES, mapApiDescription } from './map.js';

export const API_DESCRIPTION_ENDPOINT = endpoint('/openapi.json', decodeApiDescription);

/**
 * `/openapi.json`: what the service says it is (title, version, routes). One request every
 * few hours per account; a new API version shows on /metrics before a decoder trips over it.
 */
export const apiDescriptionSource: MonitoringSource = {
  name: 'api_description',
  section: 'account',
  toggle: { default: true },
  // The description changes with releases of the service, not with its data.
  cadences: { api_description: { default: '6h', minMs: HOUR } },
  endpoints: [API_DESCRIPTION_ENDPOINT],
  priority: 'normal',
  families: familyNames(API_DESCRIPTION_FAMILIES),
  create(ctx) {
    return {
      scope: 'unit',
      cadence: () => every(ctx.cadenceMs('api_description')),
      async poll() {
        const { value } = await ctx.upstream.get(API_DESCRIPTION_ENDPOINT, {}, {}, 'normal');
        ctx.sink.publish(groupName('api_description', ctx.unit.name), mapApiDescription(value, ctx.unit.name));
      },
    };
  },
};
