/**
 * docs/directives.md: one section per built-in directive, generated from its declaration in
 * src/directives/ (summary, parameter schema, memory effects, failures, example) by `npm run docs`.
 */
import type { AnyDirectiveDefinition } from '../../engine/directive-types.js';
import { describeSchema, sampleValue } from './describe-schema.js';
import { yamlFlow } from './yaml-flow.js';

type Directive = Pick<
  AnyDirectiveDefinition,
  'name' | 'summary' | 'params' | 'runs' | 'memory' | 'failures' | 'example'
>;

const INTRO = `# Built-in directives

<!-- Generated from src/directives/*.ts by \`npm run docs\`: do not edit (a test fails when it is stale). -->

Each entry of api.yaml runs one directive: \`Label: { directive: Name, ...parameters }\` (see
[api-yaml.md](api-yaml.md)). Every parameter also takes an alias (\`$.message.…\`, \`$.map.…\`,
\`$.memory.…\`, \`$.id\`), read when the entry runs and checked against the same types then. An
unknown parameter is a deploy-time error. A directive of the API's own (\`Directives/<Name>.js\` or
\`.ts\`) takes any parameters: see the README, "Writing a custom directive".

Editors complete these names and parameters from [schema/api.schema.json](../schema/api.schema.json).
`;

/** The whole of docs/directives.md. */
export function directivesDoc(directives: Iterable<Directive>): string {
  const sorted = [...directives].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const index = [
    '| directive | what it does |',
    '|---|---|',
    ...sorted.map((d) => `| [${d.name}](#${d.name.toLowerCase()}) | ${cell(d.summary)} |`),
  ];
  return `${[INTRO.trimEnd(), index.join('\n'), ...sorted.map(section)].join('\n\n')}\n`;
}

/** The parameters of the example: the declared one, or every required parameter with a value its schema accepts. */
export function exampleParams(d: Directive): Record<string, unknown> {
  if (d.example !== undefined) return { ...d.example };
  const properties = d.params.properties;
  return Object.fromEntries((d.params.required ?? []).map((name) => [name, sampleValue(name, properties[name])]));
}

function section(d: Directive): string {
  const parts = [`## ${d.name}`, d.summary, parameters(d)];
  const memory = d.memory;
  if (memory !== undefined) {
    const lines = [];
    if (memory.reads !== undefined && memory.reads.length > 0)
      lines.push(`- reads ${memory.reads.map(code).join(', ')}`);
    if (memory.writes !== undefined && memory.writes.length > 0)
      lines.push(`- writes ${memory.writes.map(code).join(', ')}`);
    if (lines.length > 0) parts.push(`**Memory** (\`<param>\`: the key the parameter names)\n\n${lines.join('\n')}`);
  }
  if (d.failures !== undefined && d.failures.length > 0) {
    const failures = d.failures.map(
      (f) =>
        `- ${f.error.status === 'caller' ? 'the status it is given' : `\`${f.error.status}\``} (\`${f.error.code}\`) ${f.when}`,
    );
    parts.push(`**Fails with**\n\n${failures.join('\n')}`);
  }
  const label = d.example === undefined ? 'Example (its required parameters)' : 'Example';
  parts.push(`**${label}**\n\n\`\`\`yaml\n${d.name}: ${yamlFlow({ directive: d.name, ...exampleParams(d) })}\n\`\`\``);
  return parts.join('\n\n');
}

function parameters(d: Directive): string {
  const { properties, patternProperties, required = [], additionalProperties } = d.params;
  const rows = Object.entries(properties).map(([name, schema]) => row(code(name), schema, required.includes(name)));
  for (const [pattern, schema] of Object.entries(patternProperties ?? {}))
    rows.push(row(`names matching \`${pattern}\``, schema, false));
  const notes: string[] = [];
  if (d.runs !== undefined)
    notes.push(
      `Every other parameter goes to the directive \`${d.runs.nameParam}\` names, and is checked against its parameters when the name is literal.`,
    );
  else if (additionalProperties) notes.push('It takes other parameters too.');
  if (rows.length === 0) return ['No parameters.', ...notes].join(' ');
  const table = ['| parameter | type | required | default | notes |', '|---|---|---|---|---|', ...rows].join('\n');
  return [table, ...notes].join('\n\n');
}

function row(name: string, schema: Record<string, unknown>, required: boolean): string {
  const defaultValue = 'default' in schema ? code(JSON.stringify(schema.default)) : '';
  const notes = [
    typeof schema.description === 'string' ? schema.description : '',
    schema.writeOnly === true ? 'secret: hidden in debug traces' : '',
  ].filter((n) => n !== '');
  return `| ${name} | ${cell(describeSchema(schema))} | ${required ? 'yes' : ''} | ${cell(defaultValue)} | ${cell(notes.join('; '))} |`;
}

function code(text: string): string {
  return text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``;
}

/** Text safe inside a table cell: `|` escaped, on one line. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}
