import { describe, expect, it } from 'vitest';
import { anvilCli } from '../helpers/cli.js';
import { useTempDir } from '../helpers/temp-dir.js';

// Issue 28 item 9: `anvil validate` says that the original's Directives/*.php files are not run
// and must be translated, pointing at docs/migrating.md; an entry that names one is an error.

const work = useTempDir('anvil-php-');

const validate = (...args: string[]) => anvilCli(['validate', ...args], { cwd: work.path(), env: { NO_COLOR: '1' } });
const hint = 'is PHP, which Anvil does not run: translate it to Directives/Stamp.js or .ts (docs/migrating.md)';

async function writeApi(entry: string): Promise<void> {
  await work.put('jobs/api.yaml', `key: jobs\nendpoints:\n  get /stamp:\n    Stamp: { directive: ${entry} }\n`);
  await work.put('jobs/Directives/Stamp.php', "<?php\n$state->memory()->set('stamp', time());\n");
  await work.put(
    'jobs/Directives/Translated.js',
    "export default function (state) { state.memory.set('stamp', 1); }\n",
  );
}

describe('anvil validate and leftover PHP directives', () => {
  it('warns about each Directives/*.php (not run) and still validates the folder', async () => {
    await writeApi('Translated');
    const result = validate('jobs');
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain('valid jobs');
    expect(result.stderr).toContain(`warning jobs/Directives/Stamp.php:1:1 Directives/Stamp.php ${hint}`);

    const json = validate('jobs', '--json');
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: true,
      key: 'jobs',
      warnings: [`jobs/Directives/Stamp.php:1:1 Directives/Stamp.php ${hint}`],
    });
  });

  it('refuses an entry that names the PHP directive, saying why', async () => {
    await writeApi('Stamp');
    const result = validate('jobs');
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      /jobs\/api\.yaml:4:\d+ \[get \/stamp › Stamp\] unknown directive "Stamp": Directives\/Stamp\.php is PHP/,
    );
  });
});
