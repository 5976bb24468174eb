/**
 * The files `npm run docs` writes (scripts/docs.mjs) that this layer makes, each from the code (the
 * cli layer adds its own: src/cli/docs-files.ts): a test regenerates them in memory and fails
 * when a checked-in copy differs. docs/api-yaml.md is written by hand but for its table of
 * `limits:` fields.
 */
import { builtinDirectives } from '../../directives/catalogue.js';
import { apiJsonSchemaText } from './api-json-schema.js';
import { directivesDoc } from './directives-doc.js';
import { withLimitsTable } from './limits-table.js';

/** Paths from the repository root, with their content; `read` gives a file's current text ('' when missing). */
export function generatedFiles(read: (path: string) => string): Record<string, string> {
  return {
    'schema/api.schema.json': apiJsonSchemaText(builtinDirectives),
    'docs/directives.md': directivesDoc(builtinDirectives.values()),
    'docs/api-yaml.md': withLimitsTable(read('docs/api-yaml.md')),
  };
}
