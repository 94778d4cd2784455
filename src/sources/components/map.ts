import type { FamilySamples } from '../../exposition/model.js';
import type { ComponentList } from '../../upstream/monitoring/schemas.js';
import { FamilyCollector, infoSpec } from '../shared/families.js';

/** Maps `/hosts/{uuid}/components` to one info series per detected component. Pure. */

export const COMPONENT_INFO = infoSpec(
  'monapi_component_info',
  'Server software detected on a host (value 1): component_kind (web-server, application-server, database, cache), software, version (empty when not reported) and display name, from /hosts/{uuid}/components, polled in the background.',
);

export interface ComponentMapOptions {
  readonly account: string;
}

/**
 * Two components with the same kind, software, version and name (for example two php-fpm
 * pools upstream names alike) give one series: duplicate series would fail the scrape.
 */
export function mapComponents(list: ComponentList, opts: ComponentMapOptions): FamilySamples[] {
  const c = new FamilyCollector();
  for (const component of list.components) {
    c.add(
      COMPONENT_INFO,
      {
        account: opts.account,
        host_uuid: list.host_uuid,
        component_kind: component.kind,
        software: component.software,
        version: component.version ?? '',
        name: component.name,
      },
      1,
    );
  }
  return c.toFamilies();
}
