// `npm run docs` (after the build): writes the files generated from the code — the JSON Schema of
// api.yaml and docs/directives.md (src/reference/generated-files.ts). test/unit/reference/
// generated-files.test.ts fails when a checked-in copy is stale.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const { generatedFiles } = await import('../dist/reference/generated-files.js');
for (const [path, content] of Object.entries(generatedFiles())) {
  const file = fileURLToPath(new URL(`../${path}`, import.meta.url));
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
  console.log(`${path} (${content.length} characters)`);
}
