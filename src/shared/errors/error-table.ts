import { Errors, type CatalogueEntry } from './catalogue.js';

/** The catalogue as a markdown table (code, status, message), sorted by code: docs/operate.md's "Error codes". */
export function errorTable(entries: readonly CatalogueEntry[] = Object.values(Errors)): string {
  const rows = [...entries]
    .sort((a, b) => a.code.localeCompare(b.code) || a.template.localeCompare(b.template))
    .map(
      (entry) => `| ${entry.code} | ${entry.status === 'caller' ? 'varies' : entry.status} | ${cell(entry.template)} |`,
    );
  return ['| Code | Status | Message (`%s`: a detail filled in) |', '| --- | --- | --- |', ...rows].join('\n');
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}
