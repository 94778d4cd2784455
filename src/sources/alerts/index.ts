import { SECOND } from '../../config/schema.js';
import { endpoint } from '../../upstream/monitoring/client.js';
import { every, familyNames, groupName, type MonitoringSource } from '../source.js';
import { ALERT_EVENT_FIELDS, decodeRecentAlerts } from './decode.js';
import { ALERT_FAMILIES, EMPTY_ALERTS_STATE, mapRecentAlerts, type AlertsState } from './map.js';
import { decodeAlerts, encodeAlerts } from './state.js';

export const RECENT_ALERTS_ENDPOINT = endpoint('/alerts/recent', decodeRecentAlerts, { limit: { kind: 'count' } });

/**
 * `/alerts/recent`: alert events counted once each (by type and id), by the website or rule that fired.
 * The page size grows after a poll that may have missed events and shrinks when quiet.
 */
export const alertsSource: MonitoringSource = {
  name: 'alerts',
  section: 'account',
  toggle: { default: true },
  cadences: { alerts: { default: '60s', minMs: 30 * SECOND } },
  endpoints: [RECENT_ALERTS_ENDPOINT],
  fields: ALERT_EVENT_FIELDS,
  priority: 'normal',
  families: familyNames(ALERT_FAMILIES),
  create(ctx) {
    let state: AlertsState = EMPTY_ALERTS_STATE;
    return {
      scope: 'unit',
      cadence: () => every(ctx.cadenceMs('alerts')),
      async poll() {
        const requestedLimit = state.limit;
        const { value } = await ctx.upstream.get(RECENT_ALERTS_ENDPOINT, {}, { limit: requestedLimit }, 'normal');
        const result = mapRecentAlerts(value, state, { account: ctx.unit.name, requestedLimit });
        state = result.state;
        ctx.sink.publish(groupName('alerts', ctx.unit.name), result.families);
        if (result.gap) {
          ctx.log.warn(
            { account: ctx.unit.name, limit: requestedLimit, nextLimit: state.limit },
            'a full page of recent alert events held none seen before: events in between may have been missed; asking for more next time',
          );
        }
      },
      persist: {
        save: () => encodeAlerts(state),
        restore(data) {
          state = decodeAlerts(data);
        },
      },
    };
  },
};
