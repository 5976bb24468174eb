import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ValidateContext } from '../../../src/deploy/api-yaml/validate-context.js';
import { builtinDirectives } from '../../../src/directives/catalogue.js';

// The api.yaml files of the example APIs (apis/, test/fixtures/apis, test/fixtures/spec-examples),
// each with the context its folder gives it (its maps and custom directives): seeds for mutation.

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const FOLDERS = ['apis', 'test/fixtures/apis', 'test/fixtures/spec-examples'];

export interface ExampleApi {
  name: string;
  text: string;
  ctx: ValidateContext;
}

function namesIn(dir: string, extensions: readonly string[]): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((file) => extensions.includes(extname(file)))
    .map((file) => basename(file, extname(file)));
}

export function exampleApis(): ExampleApi[] {
  const out: ExampleApi[] = [];
  for (const folder of FOLDERS) {
    for (const api of readdirSync(join(root, folder)).sort()) {
      const dir = join(root, folder, api);
      const file = join(dir, 'api.yaml');
      if (!existsSync(file)) continue;
      out.push({
        name: `${folder}/${api}`,
        text: readFileSync(file, 'utf8'),
        ctx: {
          file: 'api.yaml',
          mapNames: new Set(namesIn(join(dir, 'Maps'), ['.json'])),
          customDirectives: new Set(namesIn(join(dir, 'Directives'), ['.js', '.ts'])),
          directives: builtinDirectives,
        },
      });
    }
  }
  return out;
}
