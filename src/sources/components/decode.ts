import { fieldListDecoder, readFieldList } from '../../upstream/fields/body.js';
import { declareFields } from '../../upstream/fields/declare.js';
import { findersOf } from '../../upstream/fields/resolve.js';
import type { JsonDecoder } from '../../upstream/tolerant/body.js';

/**
 * `/hosts/{uuid}/components`: the servers the agent detected on a host. The agent reports
 * for each a `type` (nginx, phpfpm, mysql, ...), a local id (sha256 hex), the host uuid, a
 * display name such as `mysql @ web-1`, and per type a version, pid, name, paths. The list
 * may come grouped by kind (`{"nginx": [...], "mysql": [...]}`): the key is then the type.
 * Only a way to name the component is required: a display name, a name or an id. The host
 * is the one in the path.
 */
export const COMPONENT_FIELDS = declareFields({
  id: { kind: 'id', about: "the agent's local id of the component", words: [['id'], ['hash']], not: ['host', 'pid', 'parent', 'process', 'master'], alternatives: ['display_name', 'name'] },
  type: {
    kind: 'string',
    about: 'what the agent detected (nginx, phpfpm, mysql, ...)',
    words: [['type'], ['software'], ['kind'], ['group']],
    not: ['host', 'id', 'version', 'name', 'display', 'object'],
    // What a list grouped by category or a JSON:API resource type says is no software name.
    notValues: ['hosts', 'host', 'web_server', 'webserver', 'web', 'application_server', 'app_server', 'appserver', 'application', 'database', 'databases', 'db', 'cache', 'caches', 'server', 'servers', 'component', 'components', 'software', 'service', 'services', 'instance', 'instances'],
    useful: true,
  },
  display_name: { kind: 'string', about: 'the name the agent shows (mysql @ web-1)', words: [['display', 'name'], ['title'], ['label']], not: ['host'], useful: true, alternatives: ['name'] },
  name: { kind: 'string', about: "the component's own name (a php-fpm pool's)", words: [['name'], ['pool']], not: ['host', 'display', 'software', 'type', 'kind', 'ssl', 'binary', 'config', 'path', 'status', 'listen'], useful: true, alternatives: ['display_name'] },
  version: { kind: 'string', about: 'the version of the software', words: [['version']], not: ['agent', 'tls', 'ssl', 'http', 'api', 'config', 'openssl'], useful: true },
});

export interface Component {
  /** The agent's local id. */
  readonly id?: string;
  /** The agent's type, or the software name when the service sends that instead. */
  readonly type?: string;
  readonly display_name?: string;
  /** The component's own name (a php-fpm pool's, for example). */
  readonly name?: string;
  readonly version?: string;
}

export interface ComponentList {
  readonly host_uuid: string | undefined;
  readonly components: readonly Component[];
}

const componentFinder = findersOf(COMPONENT_FIELDS);
const PRODUCT_VERSION = /^\s*([A-Za-z][\w.-]*?)\/v?(\d[\w.+~-]*)\s*$/;
const nonEmpty = (text: string | undefined) => (text === undefined || text.trim() === '' ? undefined : text);

const COMPONENT_LIST_KEYS = ['components', 'objects', 'instances', 'servers', 'detected'];

export const decodeComponents: JsonDecoder<ComponentList> = fieldListDecoder({ keys: COMPONENT_LIST_KEYS, finders: componentFinder }, (raw, context, options) => {
  const body = readFieldList(raw, context, {
    what: 'component list',
    keys: COMPONENT_LIST_KEYS,
    finder: componentFinder(options?.fieldPaths),
    unusable: (r) =>
      nonEmpty(r.display_name) === undefined && nonEmpty(r.name) === undefined && r.id === undefined
        ? { field: 'display_name', issue: 'no display name, name or id to call the component by' }
        : undefined,
  });
  const components = body.records.map((r): Component => {
    const component: { -readonly [K in keyof Component]: Component[K] } = {};
    for (const key of ['id', 'type', 'display_name', 'name', 'version'] as const) {
      const value = nonEmpty(r[key]);
      if (value !== undefined) component[key] = value;
    }
    // `nginx/1.26.2`, as a Server header writes it: the software, and its version.
    const product = component.type === undefined ? undefined : PRODUCT_VERSION.exec(component.type);
    if (product?.[1] !== undefined && product[2] !== undefined) {
      component.type = product[1];
      component.version ??= product[2];
    }
    return component;
  });
  const envelopeHost = body.envelope.host_uuid ?? body.envelope.host;
  return {
    value: { host_uuid: typeof envelopeHost === 'string' ? envelopeHost : undefined, components },
    dropped: body.dropped,
    notes: body.notes,
    fields: body.report,
  };
});
