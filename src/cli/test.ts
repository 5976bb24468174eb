import { resolve } from 'node:path';
import { Command, Option } from 'commander';
import { envArgument } from './dotenv.js';
import { CliError, coloursFor, out, run } from './output.js';
import { checkApiFolder, shownPath } from './validate.js';

interface TestFlags {
  env?: string;
  filter?: string;
  reporter: 'human' | 'tap' | 'junit';
  json: boolean;
}

/**
 * Runs the folder's tests and prints them as asked; throws when one failed (or a test file could
 * not be read), so the exit code is 1. `deploy --test` calls it before it sends anything.
 */
export async function testFolder(
  folder: string,
  flags: Omit<TestFlags, 'json'> & { json?: boolean },
  to: NodeJS.WriteStream = process.stdout,
): Promise<{ passed: number; failed: number }> {
  const [{ runTests }, reporters] = await Promise.all([
    import('../testing/run-tests.js'),
    import('../testing/reporters.js'),
  ]);
  const result = await runTests(folder, { env: flags.env, filter: flags.filter });
  const passed = reporters.passedCount(result);
  const failed = reporters.failedCount(result);
  if (flags.json === true) {
    const cases = result.cases.map((r) => ({
      file: r.file,
      line: r.at.line,
      name: r.name,
      ok: r.failure === null,
      ms: Math.round(r.ms),
      ...(r.failure === null ? {} : { failure: reporters.failureLines(r, r.failure) }),
    }));
    if (failed === 0) out.json({ ok: true, passed, failed, files: result.files, cases });
    else
      throw new CliError(
        failureSummary(result.cases.length - passed, result.cases.length, result.errors.length),
        result.errors,
        { passed, failed, files: result.files, cases },
      );
    return { passed, failed };
  }
  const lines =
    flags.reporter === 'tap'
      ? reporters.tapReport(result)
      : flags.reporter === 'junit'
        ? reporters.junitReport(result)
        : reporters.humanReport(result, coloursFor(to));
  for (const line of lines) to.write(`${line}\n`);
  if (failed > 0)
    throw new CliError(
      `${shownPath(folder)}: ${failureSummary(result.cases.length - passed, result.cases.length, result.errors.length)}`,
    );
  return { passed, failed };
}

function failureSummary(failedCases: number, cases: number, problems: number): string {
  const parts = [];
  if (failedCases > 0 || problems === 0) parts.push(`${failedCases} of ${cases} test case(s) failed`);
  if (problems > 0) parts.push('the tests could not all be read (see the errors above)');
  return parts.join('; ');
}

export function registerTest(program: Command): void {
  program
    .command('test [dir]')
    .description(
      "Run the API folder's tests (tests/*.yaml) in this process, on the real engine and sandbox: each case with a fresh database and key space, its mocks and its own clock.",
    )
    .option('--env <name>', 'the env of test files that name none (default dev)', envArgument)
    .option('--filter <text>', 'only the cases whose name contains this')
    .addOption(
      new Option('--reporter <name>', 'how to print the run').choices(['human', 'tap', 'junit']).default('human'),
    )
    .option('--json', 'print JSON for scripts', false)
    .addHelpText(
      'after',
      '\nExamples:\n  anvil test                       # the folder you are in\n  anvil test notes --reporter junit > junit.xml\n\nThe test file format: docs/testing.md\n',
    )
    .action((dir: string | undefined, flags: TestFlags) =>
      run(flags.json, async () => {
        const folder = resolve(dir ?? '.');
        checkApiFolder(folder);
        await testFolder(folder, flags);
      }),
    );
}
