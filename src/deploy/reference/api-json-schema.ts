/**
 * schema/api.schema.json: the JSON Schema (draft 2020-12) of api.yaml for editors, made from the
 * schemas `anvil validate` uses — the structure of api-schema.ts and each built-in directive's
 * parameter schema with aliases accepted (param-schema.ts) — so the two cannot drift apart.
 * Directive names complete from `directive:`; once it names a built-in, an `if`/`then` brings in
 * that directive's parameters. Only keywords draft-07 editors also know are added (no
 * `unevaluatedProperties`), so yaml-language-server completes and checks it.
 */
import {
  API_KEY_PATTERN,
  apiYamlSchema,
  COMPAT_MODES,
  DATABASE_MODES,
  entrySchema,
  LIMIT_FIELDS,
  RESERVED_KEYS,
  TOP_LEVEL_FIELDS,
} from '../api-yaml/api-schema.js';
import { DIRECTIVE_NAME } from '../api-yaml/custom-directives.js';
import { acceptAliases, ALIAS_SCHEMA } from '../api-yaml/param-schema.js';
import { ROUTE_KEY_PATTERN } from '../api-yaml/route-key-pattern.js';
import type { AnyDirectiveDefinition } from '../../engine/directive-types.js';
import { AFTER_FLOW, ERROR_FLOW, NORMAL_FLOW, QUEUE_FLOW } from '../../engine/groups.js';

type Schema = Record<string, unknown>;
type Directives = ReadonlyMap<string, Pick<AnyDirectiveDefinition, 'name' | 'summary' | 'params' | 'runs'>>;

const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';
const ref = (name: string) => ({ $ref: `#/$defs/${name}` });

const FIELD_DESCRIPTIONS: Record<(typeof TOP_LEVEL_FIELDS)[number], string> = {
  key: `The API's name and base path (/<key>): ${API_KEY_PATTERN}, not ${[...RESERVED_KEYS].map((k) => `"${k}"`).join(', ')}.`,
  debug: "true: the messages of 5xx errors reach clients (the API's own errors; never the host's).",
  compat: `The original system whose answers the API keeps where Anvil's differ: ${COMPAT_MODES.join(', ')}.`,
  database: `Where the API's SQL data lives: ${DATABASE_MODES.join(', ')} (sqlite, the default: its own file; postgres: its own schema and role in the cluster's PostgreSQL, DATABASE_URL).`,
  limits: "The API's own sandbox limits and quotas, each at most the instance's maximum.",
  before: 'Entries run before every endpoint\'s own, in order: "Label: { directive: Name, ...parameters }".',
  endpoints:
    'Routes, "<verb> <path>" (get post put patch delete head options, or "all /requests", the catch-all), each a map of label to entry.',
  after: "Entries run after every endpoint's own, in order (OnError in ERROR_FLOW, Log in AFTER_FLOW…).",
};

/** The editor schema of api.yaml, as a plain JSON value. */
export function apiJsonSchema(directives: Directives): Schema {
  const structure = apiYamlSchema.properties;
  const properties: Schema = {
    key: { ...structure.key, not: { enum: [...RESERVED_KEYS] }, description: FIELD_DESCRIPTIONS.key },
    debug: { ...structure.debug, description: FIELD_DESCRIPTIONS.debug },
    compat: { ...structure.compat, description: FIELD_DESCRIPTIONS.compat },
    database: { ...structure.database, description: FIELD_DESCRIPTIONS.database },
    limits: {
      ...structure.limits,
      description: FIELD_DESCRIPTIONS.limits,
      properties: Object.fromEntries(
        Object.entries(structure.limits.properties).map(([name, schema]) => [
          name,
          { ...schema, description: LIMIT_FIELDS[name as keyof typeof LIMIT_FIELDS].what },
        ]),
      ),
    },
    before: { ...structure.before, description: FIELD_DESCRIPTIONS.before },
    endpoints: {
      ...structure.endpoints,
      propertyNames: { pattern: ROUTE_KEY_PATTERN },
      description: FIELD_DESCRIPTIONS.endpoints,
    },
    after: { ...structure.after, description: FIELD_DESCRIPTIONS.after },
  };
  const sorted = [...directives.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const schema = {
    $schema: DRAFT_2020_12,
    title: 'api.yaml of an Anvil API',
    description: "Generated from the validator's own schemas by `npm run docs`: do not edit.",
    ...apiYamlSchema,
    properties,
    $defs: {
      entry: entryDefinition(sorted),
      groups: {
        ...entrySchema.properties.groups,
        items: ref('group'),
        description:
          'The groups the entry runs in (default NORMAL_FLOW): it runs when any of them is enabled. Case does not matter.',
        examples: [[ERROR_FLOW.toUpperCase()], [AFTER_FLOW.toUpperCase()]],
      },
      group: {
        ...entrySchema.properties.groups.items,
        examples: [NORMAL_FLOW, ERROR_FLOW, AFTER_FLOW, QUEUE_FLOW].map((g) => g.toUpperCase()),
      },
      alias: {
        ...ALIAS_SCHEMA,
        description: 'An alias, read when the entry runs: $.message.…, $.map.<map>…, $.memory.<key>…, $.id.',
      },
      ...Object.fromEntries(sorted.map((d) => [d.name, directiveEntry(d, directives)])),
    },
  };
  // Shared subschemas become references: the validator's entry structure, and every alias branch.
  return JSON.parse(
    JSON.stringify(schema, (_key, value: unknown) => {
      if (value === entrySchema) return ref('entry');
      if (value === ALIAS_SCHEMA) return ref('alias');
      if (value === entrySchema.properties.groups) return ref('groups');
      return value;
    }),
  ) as Schema;
}

/** The schema file's text: two-space indent, a final newline. */
export function apiJsonSchemaText(directives: Directives): string {
  return `${JSON.stringify(apiJsonSchema(directives), null, 2)}\n`;
}

function entryDefinition(sorted: ReadonlyArray<Pick<AnyDirectiveDefinition, 'name' | 'summary'>>): Schema {
  return {
    ...entrySchema,
    description:
      'One entry: "directive" names a built-in or Directives/<Name>.js|.ts; every other field but "groups" is a parameter.',
    properties: {
      directive: {
        ...entrySchema.properties.directive,
        anyOf: [
          ...sorted.map((d) => ({ const: d.name, description: d.summary })),
          {
            pattern: DIRECTIVE_NAME.source,
            description: 'A custom directive: Directives/<Name>.js or .ts of this API (any parameters).',
          },
        ],
      },
      groups: ref('groups'),
    },
    allOf: sorted.map((d) => ({ if: namedBy('directive', d.name), then: ref(d.name) })),
  };
}

/** `if` of a branch: the field holds this name. */
function namedBy(field: string, name: string): Schema {
  return { properties: { [field]: { const: name } }, required: [field] };
}

/** An entry running built-in `d`: its parameters (aliases accepted) beside `directive` and `groups`. */
function directiveEntry(
  d: Pick<AnyDirectiveDefinition, 'name' | 'summary' | 'params' | 'runs'>,
  directives: Directives,
): Schema {
  const params = acceptAliases(d.params);
  const entry: Schema = {
    description: d.summary,
    ...params,
    properties: { directive: { const: d.name }, groups: ref('groups'), ...(params.properties as Schema) },
    required: ['directive', ...((params.required as string[] | undefined) ?? [])],
  };
  if (d.runs === undefined) return entry;
  // A directive that runs another (ExecuteIf): with a literal name, the other parameters are that directive's.
  const runner = d.runs;
  const own = Object.fromEntries(
    Object.entries(params.properties as Schema).filter(([name]) => runner.ownParams.includes(name)),
  );
  const targets = [...directives.values()]
    .filter((t) => t.runs === undefined)
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  return {
    ...entry,
    allOf: targets.map((t) => {
      const target = acceptAliases(t.params);
      return {
        if: namedBy(runner.nameParam, t.name),
        then: {
          ...target,
          properties: { directive: { const: d.name }, groups: ref('groups'), ...(target.properties as Schema), ...own },
          required: [
            ...new Set([...(entry.required as string[]), ...((target.required as string[] | undefined) ?? [])]),
          ],
        },
      };
    }),
  };
}
