/**
 * The files `npm run docs` writes (scripts/docs.mjs), each made from the code: a test regenerates
 * them in memory and fails when a checked-in copy differs.
 */
import { builtinDirectives } from '../directives/catalogue.js';
import { apiJsonSchemaText } from './api-json-schema.js';
import { directivesDoc } from './directives-doc.js';

/** Paths from the repository root, with their content. */
export function generatedFiles(): Record<string, string> {
  return {
    'schema/api.schema.json': apiJsonSchemaText(builtinDirectives),
    'docs/directives.md': directivesDoc(builtinDirectives.values()),
  };
}
