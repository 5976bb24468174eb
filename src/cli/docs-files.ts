/**
 * Every file `npm run docs` writes (scripts/docs.mjs), from every layer: the reference of api.yaml
 * (src/deploy/reference), and in docs/operate.md the table of `anvil start`'s options (src/cli), the
 * admin host's endpoint table (src/front/admin) and the error catalogue (src/shared/errors).
 * test/unit/reference/generated-files.test.ts fails when a checked-in copy differs.
 */
import { generatedFiles } from '../deploy/reference/generated-files.js';
import { withEndpointsTable } from '../front/admin/endpoints-doc.js';
import { errorTable } from '../shared/errors/error-table.js';
import { withMarkedSection } from '../shared/text/marked-section.js';
import { withStartOptionsDoc } from './start-doc.js';

/** Paths from the repository root, with their content; `read` gives a file's current text ('' when missing). */
export function docsFiles(read: (path: string) => string): Record<string, string> {
  return {
    ...generatedFiles(read),
    'docs/operate.md': withStartOptionsDoc(
      withEndpointsTable(
        withMarkedSection(
          read('docs/operate.md'),
          '<!-- error-table:start -->',
          '<!-- error-table:end -->',
          errorTable(),
        ),
      ),
    ),
  };
}
