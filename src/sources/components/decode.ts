import { readList, type JsonDecoder } from '../../upstream/tolerant/body.js';
import { ItemProblem, type Fields } from '../../upstream/tolerant/fields.js';
import { integer, string } from '../../upstream/tolerant/values.js';

/**
 * `/hosts/{uuid}/components`: the servers the agent detected on a host. The agent reports
 * for each a `type` (nginx, phpfpm, mysql, ...), a local id (sha256 hex), the host uuid, a
 * display name such as `mysql @ web-1`, and per type a version, pid, name, paths.
 * Only a way to name the component is required: a display name, a name or an id. The host
 * uuid may be left out of the items (the path has it).
 */
export interface Component {
  /** The agent's local id. */
  readonly id?: string;
  /** The agent's type, or the software name when the service sends that instead. */
  readonly type?: string;
  readonly display_name?: string;
  /** The component's own name (a php-fpm pool's, for example). */
  readonly name?: string;
  readonly version?: string;
  readonly pid?: number;
  readonly host_uuid?: string;
}

export interface ComponentList {
  readonly host_uuid: string | undefined;
  readonly components: readonly Component[];
}

const DISPLAY_NAME = ['display_name', 'displayName', 'title', 'label'];
const NAME = ['name', 'pool', 'pool_name'];
const ID = ['id', 'local_id', 'object_id', 'uuid', 'hash'];

export function readComponent(f: Fields): Component {
  const component: { -readonly [K in keyof Component]: Component[K] } = {};
  const put = <K extends keyof Component>(key: K, value: Component[K] | undefined) => {
    if (value !== undefined && value !== '') component[key] = value;
  };
  put('id', f.optional(ID, string));
  put('type', f.optional(['type', 'software', 'kind', 'component_type', 'object_type'], string));
  put('display_name', f.optional(DISPLAY_NAME, string));
  put('name', f.optional(NAME, string));
  put('version', f.optional(['version', 'software_version', 'build.version'], string));
  put('pid', f.optional(['pid', 'master_pid'], integer));
  put('host_uuid', f.optional(['host_uuid', 'host', 'host_id'], string));
  if (component.display_name === undefined && component.name === undefined && component.id === undefined) {
    throw new ItemProblem('missing_field', 'display_name', 'no display name, name or id to call the component by');
  }
  return component;
}

export const decodeComponents: JsonDecoder<ComponentList> = (raw, context) => {
  const body = readList(raw, context, {
    what: 'component list',
    keys: ['components', 'objects', 'instances', 'servers', 'detected'],
    read: readComponent,
  });
  return {
    value: { host_uuid: body.envelope.optional(['host_uuid', 'host'], string), components: body.items },
    dropped: body.dropped,
    notes: body.notes,
  };
};
