import { readFile } from 'node:fs/promises';
import type { DataPaths } from '../../deploy/api-yaml/data-paths.js';
import type { CompiledRelease } from '../../shared/api-model/types.js';
import type { PublicHost, Registry } from '../../deploy/registry/registry.js';
import { Errors } from '../../shared/errors.js';

/**
 * `GET /anvil/api/<key>/openapi.json`: the OpenAPI 3.1 description of the API's current release,
 * read from its compiled.json (the api.yaml as deployed). The exporter and the directive catalogue
 * it asks are loaded on the first call only: the router does not need them to serve.
 */
export async function openApiOf(
  host: PublicHost,
  key: string,
  deps: { registry: Registry; paths: DataPaths },
): Promise<unknown> {
  const record = deps.registry.getApi(host.name, key);
  if (record === null) throw Errors.unknownApi(key);
  const compiled = JSON.parse(
    await readFile(deps.paths.compiledFile(host.name, key, record.release), 'utf8'),
  ) as CompiledRelease;
  const [{ exportOpenApi }, { builtinDirectives }] = await Promise.all([
    import('../../deploy/openapi/export-openapi.js'),
    import('../../directives/catalogue.js'),
  ]);
  const basePath = host.path === null ? `/${key}` : '/';
  return exportOpenApi(
    { definition: compiled.definition, maps: compiled.maps, release: record.release, basePath },
    builtinDirectives,
  );
}
