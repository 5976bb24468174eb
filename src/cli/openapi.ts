import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { formatConfigError } from '../shared/api-model/types.js';
import { envArgument } from './dotenv.js';
import { CliError, out, run } from './output.js';
import { checkApiFolder, shownPath } from './validate.js';

/** `anvil openapi <folder>` and `anvil import openapi <spec>`. */
export function registerOpenApi(program: Command): void {
  program
    .command('openapi [dir]')
    .description(
      'Print the OpenAPI 3.1 description of an API folder (paths, parameters, body schemas, security, statuses).',
    )
    .option('--env <name>', 'the env whose Maps are used (default dev)', envArgument)
    .option('--out <file>', 'write it to a file instead of stdout')
    .option(
      '--json',
      'for scripts: the description is JSON already; a failure is {"ok": false, …}, and with --out {"ok": true, "out"} is printed',
      false,
    )
    .addHelpText(
      'after',
      '\nExamples:\n  anvil openapi orders > orders.openapi.json\n  anvil openapi orders --env pro --out openapi.json\n',
    )
    .action((dir: string | undefined, flags: { env?: string; out?: string; json: boolean }) =>
      run(flags.json, async () => {
        const folder = resolve(dir ?? '.');
        checkApiFolder(folder);
        const [{ loadApiFolder }, { exportOpenApi }, { builtinDirectives }] = await Promise.all([
          import('../deploy/api-yaml/load-api.js'),
          import('../deploy/openapi/export-openapi.js'),
          import('../directives/catalogue.js'),
        ]);
        const loaded = await loadApiFolder(folder, flags.env ?? 'dev');
        if (!loaded.ok)
          throw new CliError(
            `${shownPath(folder)} does not validate:\n${loaded.errors.map((e) => `  ${formatConfigError(e)}`).join('\n')}`,
          );
        const text = `${JSON.stringify(exportOpenApi({ definition: loaded.definition, maps: loaded.maps }, builtinDirectives), null, 2)}\n`;
        if (flags.out === undefined) process.stdout.write(text);
        else {
          writeFileSync(flags.out, text);
          if (flags.json) out.json({ ok: true, out: resolve(flags.out) });
        }
      }),
    );

  program
    .command('import')
    .description('Create an API folder from another format.')
    .command('openapi <spec>')
    .description(
      'A skeleton API folder from an OpenAPI 3.x document (YAML or JSON): one endpoint per operation, each a Ping placeholder.',
    )
    .option('--key <name>', 'the API key (default: from info.title)')
    .option('--dir <parent>', 'folder to create it in', '.')
    .option('--json', 'print JSON for scripts', false)
    .addHelpText('after', '\nExample:\n  anvil import openapi petstore.yaml --key pets && anvil validate pets\n')
    .action((spec: string, flags: { key?: string; dir: string; json: boolean }) =>
      run(flags.json, async () => {
        let text: string;
        try {
          text = readFileSync(spec, 'utf8');
        } catch (error) {
          throw new CliError(
            `cannot read ${spec}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
          );
        }
        const { importOpenApi } = await import('../deploy/openapi/import-openapi.js');
        const imported = importOpenApi(text, flags.key);
        if (!imported.ok) throw new CliError(`${spec}: ${imported.error}`);
        const { key, apiYaml, notes } = imported.api;
        const folder = resolve(flags.dir, key);
        if (existsSync(folder) && readdirSync(folder).length > 0)
          throw new CliError(`${shownPath(folder)} already exists and is not empty`, [
            'choose another name with --key, or another --dir',
          ]);

        const { validateApiYaml } = await import('../deploy/api-yaml/load-api.js');
        const { builtinDirectives } = await import('../directives/catalogue.js');
        const check = validateApiYaml(apiYaml, {
          file: 'api.yaml',
          mapNames: new Set(),
          customDirectives: new Set(),
          phpDirectives: new Set(),
          directives: builtinDirectives,
          maps: {},
        });
        if (check.errors.length > 0)
          throw new CliError(
            `${spec}: the api.yaml it makes does not validate:\n${check.errors.map((e) => `  ${formatConfigError(e)}`).join('\n')}`,
          );

        mkdirSync(folder, { recursive: true });
        writeFileSync(join(folder, 'api.yaml'), apiYaml);
        if (flags.json) {
          out.json({ ok: true, key, folder, endpoints: check.definition?.endpoints.length ?? 0, notes });
          return;
        }
        out.line(
          `${out.c.green('created')} ${out.c.bold(shownPath(folder))}/api.yaml with ${check.definition?.endpoints.length ?? 0} endpoints`,
        );
        for (const note of notes) out.line(`  note: ${note}`);
        out.line(`next: anvil validate ${shownPath(folder)}`);
      }),
    );
}
