/**
 * Every file `npm run docs` writes (scripts/docs.mjs): those made from the lower layers
 * (deploy/reference/generated-files.ts) and the table of `anvil start`'s options in
 * docs/operate.md, made here, where the options are. A test makes them anew in memory and fails
 * when a checked-in copy differs.
 */
import { generatedFiles } from '../deploy/reference/generated-files.js';
import { withStartOptionsDoc } from './start-doc.js';

/** Paths from the repository root, with their content; `read` gives a file's current text ('' when missing). */
export function everyGeneratedFile(read: (path: string) => string): Record<string, string> {
  return { ...generatedFiles(read), 'docs/operate.md': withStartOptionsDoc(read('docs/operate.md')) };
}
