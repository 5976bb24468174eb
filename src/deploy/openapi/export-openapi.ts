/**
 * OpenAPI 3.1 description of one API, from what its api.yaml declares: paths from the route table
 * (path parameters as strings), the query parameters and headers its entries read through aliases,
 * and what each entry's directive says of itself (`describe`: statuses, the credential it checks,
 * the request body model it validates). The engine stays unaware of directive names: a directive
 * without `describe` (custom ones included) adds only its aliases.
 */
import { parseAlias, findAliases } from '../../shared/api-model/aliases.js';
import { parseRoutePath } from '../api-yaml/route-path.js';
import type { ApiDefinition, EntryDefinition } from '../../shared/api-model/types.js';
import type { DirectiveChecks, OpenApiHints } from '../../engine/directive-types.js';

export type OpenApiDocument = Record<string, unknown> & {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
};

interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: Record<string, unknown>;
  responses: Record<string, { description: string }>;
  security?: Array<Record<string, string[]>>;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: { type: 'string' };
}

export interface OpenApiSource {
  definition: ApiDefinition;
  maps: Readonly<Record<string, unknown>>;
  /** The release id when the description is of a deployed release. */
  release?: string;
  /** Where the API's paths start for a client: `/<key>`, after the public host's path when it has one. */
  basePath?: string;
}

/** Headers a client does not send as an API parameter (the transport's own). */
const TRANSPORT_HEADERS = new Set(['host', 'content-type', 'content-length', 'accept', 'connection', 'user-agent']);

export function exportOpenApi(
  source: OpenApiSource,
  directives: ReadonlyMap<string, DirectiveChecks>,
): OpenApiDocument {
  const { definition } = source;
  const paths: Record<string, Record<string, Operation>> = {};
  const securitySchemes: Record<string, Record<string, unknown>> = {};
  const operationIds = new Set<string>();
  let catchAll = false;

  for (const endpoint of definition.endpoints) {
    // `all /requests` answers every request no route matches: OpenAPI has no path for that.
    if (endpoint.verb === 'all') {
      catchAll = true;
      continue;
    }
    const entries = [...definition.before, ...endpoint.entries, ...definition.after];
    const operation = describeOperation(
      endpoint.verb,
      endpoint.path,
      entries,
      source.maps,
      directives,
      securitySchemes,
    );
    let id = operation.operationId;
    for (let n = 2; operationIds.has(id); n++) id = `${operation.operationId}${n}`;
    operationIds.add(id);
    (paths[endpoint.path] ??= {})[endpoint.verb] = { ...operation, operationId: id };
  }

  const document: OpenApiDocument = {
    openapi: '3.1.0',
    info: {
      title: definition.key,
      version: source.release ?? '0.0.0-dev',
      description: `The Anvil API "${definition.key}" (generated from its api.yaml).`,
    },
    servers: [{ url: source.basePath ?? `/${definition.key}` }],
    paths,
  };
  if (Object.keys(securitySchemes).length > 0) document.components = { securitySchemes };
  if (catchAll) document['x-anvil-catch-all'] = true;
  return document;
}

function describeOperation(
  verb: string,
  path: string,
  entries: readonly EntryDefinition[],
  maps: Readonly<Record<string, unknown>>,
  directives: ReadonlyMap<string, DirectiveChecks>,
  securitySchemes: Record<string, Record<string, unknown>>,
): Operation {
  const responses: Record<string, { description: string }> = { 200: { description: 'OK' } };
  const parameters = new Map<string, Parameter>();
  const parsed = parseRoutePath(path);
  for (const name of parsed.ok ? parsed.params : [])
    parameters.set(`path ${name}`, { name, in: 'path', required: true, schema: { type: 'string' } });

  const hints: OpenApiHints[] = [];
  for (const entry of entries) {
    const hint = directives.get(entry.directive)?.describe?.(entry.params);
    if (hint !== undefined) hints.push(hint);
  }
  const credentials = new Set<string>();
  const security: Array<Record<string, string[]>> = [];
  for (const hint of hints) {
    for (const [status, description] of Object.entries(hint.responses ?? {})) responses[status] ??= { description };
    if (hint.credential !== undefined) {
      const scheme = credentialScheme(hint.credential);
      if (scheme !== null) {
        securitySchemes[scheme.id] = scheme.scheme;
        security.push({ [scheme.id]: [] });
        credentials.add(`${scheme.scheme.in} ${scheme.scheme.name}`);
      }
    }
  }

  for (const entry of entries) {
    for (const { text } of findAliases(entry.params)) {
      const alias = parseAlias(text);
      if (!alias.ok) continue;
      const { ref } = alias;
      if (ref.kind === 'query' && !credentials.has(`query ${ref.name}`)) {
        parameters.set(`query ${ref.name}`, {
          name: ref.name,
          in: 'query',
          required: false,
          schema: { type: 'string' },
        });
      } else if (ref.kind === 'header' && !credentials.has(`header ${ref.name}`) && !TRANSPORT_HEADERS.has(ref.name)) {
        parameters.set(`header ${ref.name}`, {
          name: ref.name,
          in: 'header',
          required: false,
          schema: { type: 'string' },
        });
      }
    }
  }

  const operation: Operation = { operationId: operationId(verb, path), responses };
  if (parameters.size > 0) operation.parameters = [...parameters.values()];
  const body = requestBodySchema(hints, maps);
  if (body !== null) operation.requestBody = { required: true, content: { 'application/json': { schema: body } } };
  if (security.length > 0) operation.security = security;
  return operation;
}

/** The schema of the body model an endpoint validates: the map of that name; any JSON when it loads the body unvalidated. */
function requestBodySchema(
  hints: readonly OpenApiHints[],
  maps: Readonly<Record<string, unknown>>,
): Record<string, unknown> | null {
  const loaded = new Set(hints.flatMap((h) => (h.bodyModel === undefined ? [] : [h.bodyModel])));
  if (loaded.size === 0) return null;
  for (const hint of hints) {
    const name = hint.validatesModel;
    if (name === undefined || !loaded.has(name)) continue;
    const schema = maps[name];
    if (schema !== null && typeof schema === 'object' && !Array.isArray(schema))
      return schema as Record<string, unknown>;
  }
  return {};
}

/** An apiKey scheme for a credential read from a header or the query string; null for any other alias. */
function credentialScheme(
  alias: string,
): { id: string; scheme: { type: 'apiKey'; in: 'header' | 'query'; name: string } } | null {
  const parsed = parseAlias(alias);
  if (!parsed.ok) return null;
  const { ref } = parsed;
  if (ref.kind !== 'header' && ref.kind !== 'query') return null;
  return {
    id: `${ref.kind}.${ref.name.replace(/[^A-Za-z0-9._-]/g, '_')}`,
    scheme: { type: 'apiKey', in: ref.kind, name: ref.name },
  };
}

/** `get /users/{id}` → `getUsersById`: unique per verb and path within an API. */
export function operationId(verb: string, path: string): string {
  const words = path
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => (segment.startsWith('{') ? `By ${segment.slice(1, -1)}` : segment))
    .join(' ')
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word !== '')
    .map((word) => word[0]!.toUpperCase() + word.slice(1));
  return `${verb}${words.join('') || 'Root'}`;
}
