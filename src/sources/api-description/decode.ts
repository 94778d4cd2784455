import { readObject, type JsonDecoder } from '../../upstream/tolerant/body.js';
import type { Fields } from '../../upstream/tolerant/fields.js';
import { isRecord, string } from '../../upstream/tolerant/values.js';

/**
 * `/openapi.json`: the machine-readable description the service publishes of itself (an
 * OpenAPI 3 document, section 1 of the API document). Read: the OpenAPI version, the API's
 * title and version (`info`), and the route templates it describes (`paths`). The version
 * of the description is required: without it the body is not an OpenAPI document.
 */
export interface ApiDescription {
  /** `3.1.0`, `3.0.3`. */
  readonly openapi: string;
  readonly title: string | undefined;
  readonly version: string | undefined;
  /** The route templates, relative to the base URL (`/hosts/{uuid}`), sorted. */
  readonly paths: readonly string[];
}

function readDescription(f: Fields): ApiDescription {
  const paths = f.record.paths;
  return {
    openapi: f.required(['openapi', 'swagger'], string),
    title: f.optional(['info.title'], string),
    version: f.optional(['info.version'], string),
    paths: isRecord(paths) ? Object.keys(paths).sort() : [],
  };
}

export const decodeApiDescription: JsonDecoder<ApiDescription> = (raw, context) => {
  const { value, notes } = readObject(raw, context, { what: 'API description', keys: [], signature: ['openapi', 'swagger', 'info', 'paths'], read: readDescription });
  return { value, dropped: [], notes };
};
