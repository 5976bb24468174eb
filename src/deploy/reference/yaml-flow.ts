/** A value as one line of YAML flow style (`{ directive: Ping, status: 404 }`), for the examples of docs/directives.md. */

const PLAIN = /^[A-Za-z_$/<.][^:#,[\]{}&*!|>'"%@`]*$/;
const RESERVED = /^(?:true|false|null|~|yes|no|on|off|y|n)$/i;

export function yamlFlow(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string')
    return PLAIN.test(value) && !RESERVED.test(value) && value.trim() === value ? value : JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(yamlFlow).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return '{}';
  return `{ ${entries.map(([k, v]) => `${yamlFlow(k)}: ${yamlFlow(v)}`).join(', ')} }`;
}
