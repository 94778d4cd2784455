import type { FamilySamples } from '../../exposition/model.js';
import type { Component, ComponentList } from './decode.js';
import { FamilyCollector, infoSpec } from '../shared/families.js';

/** Maps `/hosts/{uuid}/components` to one info series per detected component. Pure. */

export const COMPONENT_INFO = infoSpec(
  'monapi_component_info',
  'Server software the agent detected on a host (value 1): component (its display name, such as "mysql @ web-1", else its name, else its id), type (the agent\'s type such as nginx, phpfpm or mysql, else the software upstream names) and version (empty when not reported), from /hosts/{uuid}/components, polled in the background.',
);

export interface ComponentMapOptions {
  readonly account: string;
  /** The host of the request path: items need not carry it. */
  readonly hostUuid: string;
}

/**
 * What a component is called: its display name; else its name (services that send one name
 * for a component call the display name `name`, as the simulator does); else its id, a
 * sha256 that is unique but unreadable.
 */
export function componentName(component: Component): string {
  return component.display_name ?? component.name ?? component.id ?? '';
}

/**
 * Two components with the same name, type and version (two pools upstream names alike)
 * give one series: duplicate series would fail the scrape.
 */
export function mapComponents(list: ComponentList, opts: ComponentMapOptions): FamilySamples[] {
  const c = new FamilyCollector();
  for (const component of list.components) {
    c.add(
      COMPONENT_INFO,
      {
        account: opts.account,
        host_uuid: opts.hostUuid,
        component: componentName(component),
        type: component.type ?? '',
        version: component.version ?? '',
      },
      1,
    );
  }
  return c.toFamilies();
}
