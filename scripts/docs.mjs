// `npm run docs` (after the build): writes the files generated from the code — the JSON Schema of
// api.yaml, docs/directives.md, the limits table of docs/api-yaml.md and the table of `anvil start`'s
// options in docs/operate.md (src/cli/generated-files.ts). test/unit/reference/generated-files.test.ts
// fails when a checked-in copy is stale.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const { everyGeneratedFile } = await import('../dist/cli/generated-files.js');
const fileOf = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const read = (path) => (existsSync(fileOf(path)) ? readFileSync(fileOf(path), 'utf8') : '');
for (const [path, content] of Object.entries(everyGeneratedFile(read))) {
  mkdirSync(dirname(fileOf(path)), { recursive: true });
  writeFileSync(fileOf(path), content);
  console.log(`${path} (${content.length} characters)`);
}
