import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { loadApiFolder, validateApiYaml } from '../../src/deploy/api-yaml/load-api.js';
import { builtinDirectives } from '../../src/directives/catalogue.js';
import { exportOpenApi, type OpenApiDocument } from '../../src/deploy/openapi/export-openapi.js';
import { importOpenApi } from '../../src/deploy/openapi/import-openapi.js';

const root = join(import.meta.dirname, '../..');
const apisDir = join(root, 'apis');

async function exportFolder(folder: string): Promise<OpenApiDocument> {
  const loaded = await loadApiFolder(folder, 'dev');
  if (!loaded.ok) throw new Error(`${folder}: ${JSON.stringify(loaded.errors)}`);
  return exportOpenApi({ definition: loaded.definition, maps: loaded.maps }, builtinDirectives);
}

async function expectValid(document: unknown): Promise<void> {
  const result = await new Validator().validate(document as Parameters<Validator['validate']>[0]);
  expect(result.errors ?? []).toEqual([]);
  expect(result.valid).toBe(true);
}

/** `verb path` of every operation, sorted. */
function operations(document: OpenApiDocument): string[] {
  return Object.entries(document.paths)
    .flatMap(([path, item]) => Object.keys(item).map((verb) => `${verb} ${path}`))
    .sort();
}

describe('OpenAPI export', () => {
  it.each(readdirSync(apisDir))('describes the example API %s as a valid OpenAPI 3.1 document', async (name) => {
    const document = await exportFolder(join(apisDir, name));
    await expectValid(document);
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers).toEqual([{ url: `/${(document.info as { title: string }).title}` }]);
  });

  it('types path parameters, lists the query parameters and headers the flow reads, and names the api-key header as the security', async () => {
    const yaml = [
      'key: shop',
      'before:',
      '  CheckKey: { directive: CheckKey, expected: $.map.main.key, current: $.message.header.api-key }',
      'endpoints:',
      '  get /items/{id}:',
      '    Reply: { directive: ModifyMessage, body: { id: $.message.pathParam.id, page: $.message.query.page, lang: $.message.header.accept-language } }',
      '  all /requests:',
      '    Ping: { directive: Ping }',
    ].join('\n');
    const checked = validateApiYaml(yaml, {
      file: 'api.yaml',
      mapNames: new Set(['main']),
      customDirectives: new Set(),
      phpDirectives: new Set(),
      directives: builtinDirectives,
      maps: { main: { key: 'k' } },
    });
    expect(checked.errors).toEqual([]);
    const document = exportOpenApi(
      { definition: checked.definition!, maps: { main: { key: 'k' } }, release: 'r7' },
      builtinDirectives,
    );
    await expectValid(document);
    expect(document.info).toMatchObject({ title: 'shop', version: 'r7' });
    expect(document['x-anvil-catch-all']).toBe(true);
    expect(operations(document)).toEqual(['get /items/{id}']);
    const operation = document.paths['/items/{id}']!.get!;
    expect(operation.parameters).toEqual([
      { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
      { name: 'page', in: 'query', required: false, schema: { type: 'string' } },
      { name: 'accept-language', in: 'header', required: false, schema: { type: 'string' } },
    ]);
    expect(operation.security).toEqual([{ 'header.api-key': [] }]);
    expect(operation.responses['401']).toBeDefined();
    expect(document.components).toEqual({
      securitySchemes: { 'header.api-key': { type: 'apiKey', in: 'header', name: 'api-key' } },
    });
  });

  it('takes the request body schema from the model the endpoint validates, and the statuses of RateLimit and ThrowError', async () => {
    const orders = await exportFolder(join(apisDir, 'orders'));
    const order = JSON.parse(readFileSync(join(apisDir, 'orders/Maps/order.json'), 'utf8'));
    const posts = Object.values(orders.paths).flatMap((item) =>
      item.post?.requestBody ? [item.post.requestBody] : [],
    );
    expect(posts).toEqual([{ required: true, content: { 'application/json': { schema: order } } }]);

    const limited = await exportFolder(join(apisDir, 'limited'));
    expect(
      Object.values(limited.paths).some((item) => Object.values(item).some((op) => op.responses['429'] !== undefined)),
    ).toBe(true);

    const yaml =
      'key: fails\nendpoints:\n  get /gone:\n    Gone: { directive: ThrowError, status: 410, message: This is gone }\n';
    const checked = validateApiYaml(yaml, {
      file: 'api.yaml',
      mapNames: new Set(),
      customDirectives: new Set(),
      phpDirectives: new Set(),
      directives: builtinDirectives,
      maps: {},
    });
    const document = exportOpenApi({ definition: checked.definition!, maps: {} }, builtinDirectives);
    expect(document.paths['/gone']!.get!.responses['410']).toEqual({ description: 'This is gone' });
  });
});

describe('OpenAPI import', () => {
  const petstore = readFileSync(join(root, 'test/fixtures/openapi/petstore.yaml'), 'utf8');

  it('makes an api.yaml with one Ping endpoint per operation that validates and exports back to the same paths and methods', async () => {
    const imported = importOpenApi(petstore);
    expect(imported.ok).toBe(true);
    if (!imported.ok) return;
    expect(imported.api.key).toBe('swagger-petstore');
    expect(imported.api.notes).toEqual([
      '/stores/{store-id}/orders: path parameter {store-id} is {store_id} in api.yaml',
      'TRACE /stores/{store-id}/orders: api.yaml has no "trace" verb; left out',
    ]);
    const checked = validateApiYaml(imported.api.apiYaml, {
      file: 'api.yaml',
      mapNames: new Set(),
      customDirectives: new Set(),
      phpDirectives: new Set(),
      directives: builtinDirectives,
      maps: {},
    });
    expect(checked.errors).toEqual([]);
    const exported = exportOpenApi({ definition: checked.definition!, maps: {} }, builtinDirectives);
    await expectValid(exported);
    expect(operations(exported)).toEqual([
      'delete /pets/{petId}',
      'get /pets',
      'get /pets/{petId}',
      'get /stores/{store_id}/orders',
      'post /pets',
    ]);

    // And once more from the export (JSON this time): the same routes.
    const routes = (yaml: string) => yaml.split('\n').filter((line) => /^ {2}[a-z]+ \//.test(line));
    const again = importOpenApi(JSON.stringify(exported), 'swagger-petstore');
    expect(again.ok && routes(again.api.apiYaml)).toEqual(routes(imported.api.apiYaml));
  });

  it.each([
    [
      'swagger: "2.0"\ninfo: { title: old }\npaths: {}\n',
      '"openapi" must be a 3.0.x or 3.1.x version, found Swagger 2.0',
    ],
    ['openapi: 3.1.0\ninfo: { title: empty }\npaths: {}\n', 'the document has no operations under "paths"'],
    [
      'openapi: 3.1.0\ninfo: { title: "!!!" }\npaths: { /a: { get: {} } }\n',
      '"" is not a valid API key (1 to 63 lower-case letters, digits and "-"): name it with --key',
    ],
    ['- a list\n', 'the file must hold an OpenAPI document (a map at the top)'],
    ['openapi: [unclosed\n', 'the file is neither YAML nor JSON'],
  ])('refuses %j with a clear message', (text, message) => {
    const imported = importOpenApi(text);
    expect(imported.ok).toBe(false);
    if (!imported.ok) expect(imported.error).toContain(message);
  });
});
