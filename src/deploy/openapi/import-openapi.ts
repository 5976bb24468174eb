/**
 * `anvil import openapi`: an OpenAPI 3.x document (YAML or JSON text) to the api.yaml of a skeleton
 * API, one endpoint per operation, each answering with a Ping placeholder until its author writes
 * the flow. Path parameter names api.yaml cannot take (`{user-id}`) are renamed (`{user_id}`).
 */
import { parse as parseYaml } from 'yaml';
import { API_KEY, RESERVED_KEYS } from '../api-yaml/api-key.js';
import { PARAM_NAME } from '../api-yaml/route-path.js';
import { VERBS } from '../../shared/api-model/types.js';

export interface ImportedApi {
  key: string;
  apiYaml: string;
  /** Operations and names that could not be kept as they were, for the user to read. */
  notes: string[];
}

export type ImportResult = { ok: true; api: ImportedApi } | { ok: false; error: string };

const OPERATION_VERBS = new Set<string>(VERBS);

export function importOpenApi(text: string, keyOverride?: string): ImportResult {
  let document: unknown;
  try {
    document = parseYaml(text, { maxAliasCount: 100 });
  } catch (error) {
    return { ok: false, error: `the file is neither YAML nor JSON: ${(error as Error).message}` };
  }
  if (!isRecord(document)) return { ok: false, error: 'the file must hold an OpenAPI document (a map at the top)' };
  if (typeof document.openapi !== 'string' || !/^3\.[01]\./.test(document.openapi)) {
    const found =
      typeof document.swagger === 'string' ? `Swagger ${document.swagger}` : JSON.stringify(document.openapi ?? null);
    return { ok: false, error: `"openapi" must be a 3.0.x or 3.1.x version, found ${found}` };
  }
  if (!isRecord(document.paths)) return { ok: false, error: '"paths" must be a map of path to operations' };

  const info = isRecord(document.info) ? document.info : {};
  const key = keyOverride ?? slug(typeof info.title === 'string' ? info.title : '');
  if (!API_KEY.test(key) || RESERVED_KEYS.has(key)) {
    return {
      ok: false,
      error: `"${key}" is not a valid API key (1 to 63 lower-case letters, digits and "-"): name it with --key`,
    };
  }

  const notes: string[] = [];
  const routes: string[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    if (!isRecord(item)) continue;
    const anvilPath = renameParams(path, notes);
    for (const [verb, operation] of Object.entries(item)) {
      if (!OPERATION_VERBS.has(verb)) {
        if (verb === 'trace') notes.push(`${verb.toUpperCase()} ${path}: api.yaml has no "trace" verb; left out`);
        continue;
      }
      const summary = isRecord(operation) && typeof operation.summary === 'string' ? operation.summary : null;
      const id = isRecord(operation) && typeof operation.operationId === 'string' ? operation.operationId : null;
      routes.push(endpointYaml(verb, anvilPath, summary ?? id));
    }
  }
  if (routes.length === 0) return { ok: false, error: 'the document has no operations under "paths"' };

  const title = typeof info.title === 'string' ? info.title : key;
  const apiYaml = [
    `# ${key}: imported from the OpenAPI document "${oneLine(title)}" by \`anvil import openapi\`.`,
    "# Every endpoint answers with a Ping placeholder: replace it with the endpoint's flow.",
    `key: ${key}`,
    '',
    'endpoints:',
    ...routes,
  ].join('\n');
  return { ok: true, api: { key, apiYaml: `${apiYaml}\n`, notes } };
}

function endpointYaml(verb: string, path: string, summary: string | null): string {
  const comment = summary === null ? '' : `  # ${oneLine(summary)}\n`;
  return `${comment}  ${verb} ${path}:\n    Placeholder: { directive: Ping }\n`;
}

/** `{user-id}` → `{user_id}` (api.yaml's names are identifiers); noted once per path. */
function renameParams(path: string, notes: string[]): string {
  return path.replace(/\{([^}]*)\}/g, (whole, name: string) => {
    if (PARAM_NAME.test(name)) return whole;
    let renamed = name.replace(/[^A-Za-z0-9_]/g, '_');
    if (!/^[A-Za-z_]/.test(renamed)) renamed = `p_${renamed}`;
    notes.push(`${path}: path parameter {${name}} is {${renamed}} in api.yaml`);
    return `{${renamed}}`;
  });
}

function slug(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 200);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
