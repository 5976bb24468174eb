import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { anvilCli } from '../helpers/cli.js';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';

// `anvil start --apis DIR --watch`: a changed API folder is redeployed; a broken edit keeps the last
// good release serving and its revert is said to be fixed; files that never enter a release do not
// make one; a deleted folder's API is disabled.

const api = (greeting: string) => `key: echo
endpoints:
  get /hi:
    Reply: { directive: ModifyMessage, body: { greeting: ${greeting} } }
`;

let anvil: TestInstance | null = null;
afterEach(async () => {
  await anvil?.dispose();
  anvil = null;
});

describe('anvil start --watch', () => {
  it('redeploys a changed folder, keeps serving the last good release through a broken edit', async () => {
    anvil = await startInstance({ apis: { echo: { 'api.yaml': api('one') } }, args: ['--watch'] });
    const folder = join(anvil.apisDir, 'echo');
    const greeting = async () => (await anvil!.request('/echo/hi')).json().greeting as string;
    expect(await greeting()).toBe('one');

    writeFileSync(join(folder, 'README.md'), 'not part of a release');
    writeFileSync(join(folder, 'api.yaml'), api('two'));
    await eventually(async () => (await greeting()) === 'two');
    const record = (await anvil.admin('/anvil/api/echo')).json();
    expect(record.releases).toHaveLength(1); // the README made no release of its own

    writeFileSync(join(folder, 'api.yaml'), api('three').replace('ModifyMessage', 'NoSuchThing'));
    await eventually(() => anvil!.output().includes('API folder \\"echo\\" changed and is invalid'));
    expect(anvil.output()).toMatch(/api\.yaml:4:\d+ \[get \/hi › Reply\] unknown directive \\"NoSuchThing\\"/);
    expect(await greeting()).toBe('two');

    // Reverting the broken edit gives back the files that kept serving: no new release, but it is said.
    writeFileSync(join(folder, 'api.yaml'), api('two'));
    await eventually(() => anvil!.output().includes('API folder \\"echo\\" is fixed: echo serves release'));
    expect(await greeting()).toBe('two');

    writeFileSync(join(folder, 'api.yaml'), api('four'));
    await eventually(async () => (await greeting()) === 'four');

    // A deleted folder's API stops serving (disabled: its releases and data are kept).
    rmSync(folder, { recursive: true, force: true });
    await eventually(async () => (await anvil!.request('/echo/hi')).status === 404);
    await eventually(() => anvil!.output().includes('API folder \\"echo\\" was deleted: echo is disabled'));
    expect((await anvil.admin('/anvil/api/echo')).json()).toMatchObject({ active: false });
  });

  it('refuses --watch without --apis', () => {
    const result = anvilCli(['start', '--watch', '--port', '0']);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('--watch needs --apis <dir>');
  });
});
