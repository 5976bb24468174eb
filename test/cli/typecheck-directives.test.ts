import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anvilCli } from '../helpers/cli.js';
import { useTempDir } from '../helpers/temp-dir.js';

// Directives in TypeScript are type-checked by `anvil validate` and `anvil deploy` (tsc --strict,
// ES2022 only), each error as file:line:col (issue 45).

const TYPED = `import type { Directive } from './directive';

const Count: Directive<{ name: string }> = (state, config) => {
  const row = state.db.get('SELECT count FROM counts WHERE name = ?', [config.name]);
  state.message.body = { count: row.count };
};
export default Count;
`;
const API =
  'key: counted\nendpoints:\n  get /count/{name}:\n    Count: { directive: Count, name: $.message.pathParam.name }\n';

describe('TypeScript directives are type-checked before anything is sent', () => {
  const work = useTempDir('anvil-typecheck-');
  const env = { NO_COLOR: '1' };

  it('validate names the type error by file, line and column; --no-typecheck skips the check; narrowing by return state.fail() passes', async () => {
    expect(anvilCli(['create-api', 'counted'], { cwd: work.path(), env }).status).toBe(0);
    await work.put('counted/api.yaml', API);
    await rm(join(work.path(), 'counted/Directives/Hello.ts'));
    await work.put('counted/Directives/Count.ts', TYPED);
    const refused = anvilCli(['validate', 'counted'], { cwd: work.path(), env });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("counted/Directives/Count.ts:5:33 'row' is possibly 'null'. (TS18047)");
    expect(anvilCli(['validate', 'counted', '--no-typecheck'], { cwd: work.path(), env }).status).toBe(0);

    await work.put(
      'counted/Directives/Count.ts',
      TYPED.replace(
        '  state.message.body',
        "  if (row === null) return state.fail(404, 'none');\n  state.message.body",
      ),
    );
    const fixed = anvilCli(['validate', 'counted'], { cwd: work.path(), env });
    expect(fixed.stderr).toBe('');
    expect(fixed.status).toBe(0);
  });

  it('an isolate has no console and no Node: using them is a type error too', async () => {
    expect(anvilCli(['create-api', 'counted'], { cwd: work.path(), env }).status).toBe(0);
    await work.put(
      'counted/Directives/Hello.ts',
      "import type { Directive } from './directive';\nconst Hello: Directive = () => {\n  console.log(process.pid);\n};\nexport default Hello;\n",
    );
    const refused = anvilCli(['validate', 'counted', '--json'], { cwd: work.path(), env });
    expect(refused.status).toBe(1);
    const errors = (JSON.parse(refused.stdout) as { errors: string[] }).errors;
    expect(errors).toEqual([
      "counted/Directives/Hello.ts:3:3 Cannot find name 'console'. Do you need to change your target library? Try changing the 'lib' compiler option to include 'dom'. (TS2584)",
      "counted/Directives/Hello.ts:3:15 Cannot find name 'process'. Do you need to install type definitions for node? Try `npm i --save-dev @types/node` and then add 'node' to the types field in your tsconfig. (TS2591)",
    ]);
  });

  it('deploy refuses a folder with a type error and sends nothing', async () => {
    expect(anvilCli(['create-api', 'counted'], { cwd: work.path(), env }).status).toBe(0);
    await work.put('counted/api.yaml', API);
    await rm(join(work.path(), 'counted/Directives/Hello.ts'));
    await work.put('counted/Directives/Count.ts', TYPED);
    // Port 9 (discard) is closed here: had the deploy sent anything, it would fail on the connection instead.
    const deployEnv = {
      ...env,
      DEPLOY_ENDPOINT_DEV: 'http://127.0.0.1:9/anvil/api',
      PUBLIC_HOST_DEV: 'localhost',
      API_KEY_DEV: 'k',
    };
    const refused = anvilCli(['deploy', 'counted', 'dev'], { cwd: work.path(), env: deployEnv });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('counted is not valid (nothing was sent): 1 error(s)');
    expect(refused.stderr).toContain("counted/Directives/Count.ts:5:33 'row' is possibly 'null'. (TS18047)");
  });
});
