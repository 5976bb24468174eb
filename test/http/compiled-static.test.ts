import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledApi } from '../helpers/compiled-static-api.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { tarGz } from '../helpers/tarball.js';
import { waitFor } from '../helpers/wait-for.js';

// ServeCompiledStatic across a deploy (ORIGINAL.md, flaw 13 fixed: the `r` of the URL must be the
// release that serves it); what it serves within one release runs in-process:
// test/directives/compiled-static.test.ts.

let anvil: TestInstance;
beforeAll(async () => {
  anvil = await startInstance({ apis: { compiled: compiledApi('red') } });
});
afterAll(async () => anvil?.dispose());

async function page(): Promise<{ css: string; js: string }> {
  const reply = await anvil.request('/compiled/page');
  expect(reply.status).toBe(200);
  return reply.json();
}

describe('ServeCompiledStatic', () => {
  it('serves only the release now serving: the URL of an earlier one is a 404', async () => {
    const before = (await page()).css;
    const deployed = await anvil.admin('/anvil/api', {
      method: 'POST',
      body: tarGz(compiledApi('blue')),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(deployed.status).toBe(201);
    const after = await waitFor(
      async () => {
        const css = (await page()).css;
        return css !== before ? css : null;
      },
      { what: 'the new release to serve' },
    );
    expect((await anvil.request(after)).text).toBe('body { color: blue; }\n.theme { margin: 0; }');
    expect((await anvil.request(before)).status).toBe(404);
  });
});
