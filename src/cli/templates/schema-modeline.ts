import { isAbsolute, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** schema/api.schema.json of this Anvil (the same place from src/ and from dist/). */
export const API_SCHEMA_URL = new URL('../../../schema/api.schema.json', import.meta.url);

/**
 * The first line of a new api.yaml in `folder`: yaml-language-server (VS Code's YAML extension,
 * and other editors') reads the schema it names, to complete and check the file. Relative when the
 * folder is inside this Anvil's tree (it survives moving the checkout), else the schema's file URL
 * (it survives moving the folder).
 */
export function schemaModeline(folder: string): string {
  const schema = fileURLToPath(API_SCHEMA_URL);
  const root = fileURLToPath(new URL('../../../', import.meta.url));
  const inside = relative(root, folder);
  const where =
    inside.startsWith('..') || isAbsolute(inside) ? API_SCHEMA_URL.href : relative(folder, schema).split(sep).join('/');
  return `# yaml-language-server: $schema=${where}\n`;
}
