import { decodeAlerts, encodeAlerts } from '../../state/codecs.js';
import { familyNames, groupName, type AccountSource, type SourceContext } from '../types.js';
import { ALERT_FAMILIES, EMPTY_ALERTS_STATE, mapRecentAlerts, type AlertsState } from './map.js';

/**
 * `/alerts/recent`: alert events counted once each (by type and id), by the website or rule that fired.
 * The page size grows after a poll that may have missed events and shrinks when quiet.
 */
export function createAlertsSource(ctx: SourceContext): AccountSource {
  let state: AlertsState = EMPTY_ALERTS_STATE;
  return {
    name: 'alerts',
    toggle: 'alerts',
    families: familyNames(ALERT_FAMILIES),
    scope: 'account',
    priority: 'normal',
    cadence: 'alerts',
    async poll() {
      const requestedLimit = state.limit;
      const { value } = await ctx.client.recentAlerts(requestedLimit, 'normal');
      const result = mapRecentAlerts(value, state, { account: ctx.account.name, requestedLimit });
      state = result.state;
      ctx.sink.publish(groupName('alerts', ctx.account.name), result.families);
      if (result.gap) {
        ctx.log.warn(
          { account: ctx.account.name, limit: requestedLimit, nextLimit: state.limit },
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
}
