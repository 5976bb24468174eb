import { Command, Option } from 'commander';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { addStartFlags, readStartValues } from '../../src/cli/start-command.js';
import { startOptionsDoc } from '../../src/cli/start-doc.js';
import { START_GROUPS, type StartOption } from '../../src/cli/start-option.js';
import { instanceOptions } from '../../src/cli/start-options.js';
import { START_FLAGS, START_OPTIONS, type StartValues } from '../../src/cli/start-table.js';
import { registerStart } from '../../src/cli/start.js';

const options = Object.entries(START_OPTIONS) as [string, StartOption<unknown>][];
const flags = Object.entries(START_FLAGS) as [string, StartOption<unknown>][];

/** Only `env` of the table's variables is set: nothing of the machine's (CI may set REDIS_URL, say) nor of another call. */
function onlyVariables(env: Record<string, string>): void {
  for (const [, option] of options)
    for (const name of [option.env, option.fallbackEnv]) if (name !== null) vi.stubEnv(name, env[name]);
}
beforeEach(() => onlyVariables({}));
afterEach(() => vi.unstubAllEnvs());

/** The values `anvil start` reads from this command line and environment; throws what it would print. */
function startValues(argv: string[], env: Record<string, string> = {}): Record<string, unknown> {
  onlyVariables(env);
  const command = addStartFlags(new Command('start'))
    .exitOverride()
    .configureOutput({ writeErr: () => {} });
  command.parse(argv, { from: 'user' });
  return readStartValues(command);
}

function errorOf(argv: string[], env: Record<string, string> = {}): string {
  try {
    startValues(argv, env);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${JSON.stringify({ argv, env })} was accepted`);
}

/** What the option's parser makes of `text`; null when it refuses it. */
function tryRead(option: StartOption<unknown>, text: string): { value: unknown } | null {
  try {
    return { value: option.parse.read(text, 'x') };
  } catch {
    return null;
  }
}

/** A value the option's parser takes, other than its default. */
function sample(option: StartOption<unknown>): string {
  const differs = (text: string) =>
    JSON.stringify(tryRead(option, text)?.value ?? option.default) !== JSON.stringify(option.default);
  const text = ['3', '5', '7s', '3KiB', 'qa', '10.0.0.0/8'].find(differs);
  if (text === undefined) throw new Error(`no sample for ${option.flag ?? option.env}`);
  return text;
}

const long = (option: StartOption<unknown>) => option.flag!.split(' ')[0]!;
const isSwitch = (option: StartOption<unknown>) => !option.flag!.includes('<');

describe('the table of anvil start options', () => {
  it('lists every option once in docs/operate.md, under its group, with its default and its doc', () => {
    const rows = new Map<string, { group: string; cells: string[] }>();
    let group = '';
    for (const line of startOptionsDoc().split('\n')) {
      if (/^\*\*.+\*\*$/.test(line)) group = line.slice(2, -2);
      const cells = line.startsWith('| `') || line.startsWith('| — ') ? line.slice(2, -2).split(' | ') : null;
      if (cells !== null) rows.set(cells[1]!.split(',')[0]!, { group, cells });
    }
    expect(rows.size).toBe(options.length);
    for (const [, option] of options) {
      const row = rows.get(`\`${option.env}\``);
      expect(row, option.env).toBeDefined();
      const [flag, , shownDefault, doc] = row!.cells;
      expect(row!.group, option.env).toBe(START_GROUPS[option.group]);
      expect(flag).toBe(option.flag === null ? '—' : `\`${option.flag}\``);
      expect(shownDefault, `${option.env}'s default`).toMatch(/\S/);
      expect(doc, `${option.env}'s doc`).toBe(option.doc);
    }
  });

  it("names each flag's variable after it, and its value as commander does", () => {
    for (const [name, option] of flags) {
      expect(option.env).toBe(`ANVIL_${long(option).slice(2).replace(/-/g, '_').toUpperCase()}`);
      expect(new Option(option.flag!).attributeName()).toBe(name);
    }
  });

  it('gives every option its default when nothing sets it', () => {
    expect(startValues([])).toEqual(Object.fromEntries(options.map(([name, option]) => [name, option.default])));
  });

  it.each(flags.filter(([, option]) => !isSwitch(option)))(
    '%s: the flag and its variable give the same value',
    (name, option) => {
      const text = sample(option);
      const fromFlag = startValues([long(option), text])[name];
      expect(fromFlag).not.toEqual(option.default);
      expect(startValues([], { [option.env]: text })[name]).toEqual(fromFlag);
    },
  );

  it.each(flags.filter(([, option]) => isSwitch(option)))(
    '%s: the switch is on from its flag, or its variable set to anything but "", 0 or false',
    (name, option) => {
      expect(startValues([long(option)])[name]).toBe(true);
      for (const on of ['1', 'true', 'yes']) expect(startValues([], { [option.env]: on })[name]).toBe(true);
      for (const off of ['', '0', 'false', 'FALSE']) expect(startValues([], { [option.env]: off })[name]).toBe(false);
    },
  );

  const checked = flags.filter(([, option]) => !isSwitch(option) && tryRead(option, 'bogus') === null);

  it.each(checked)('%s: a bad value is refused naming the flag, and the variable it came from', (_name, option) => {
    expect(errorOf([long(option), 'bogus'])).toContain(
      `option '${option.flag}' argument 'bogus' is invalid. ${long(option)}`,
    );
    expect(errorOf([], { [option.env]: 'bogus' })).toContain(
      `option '${option.flag}' value 'bogus' from env '${option.env}' is invalid. ${long(option)}`,
    );
  });

  it('checks most flags (only addresses, folders and the like take any text)', () => {
    expect(checked.length).toBeGreaterThan(45);
  });

  it("makes the instance's options from the values", () => {
    const values = startValues(['--cells', '3', '--max-isolate-memory', '100MiB', '--shared-threads', '0'], {
      ANVIL_REQUEST_TIMEOUT: '5s',
      DATABASE_URL: '',
    });
    expect(instanceOptions(values as StartValues, false)).toMatchObject({
      cells: 3,
      maxCells: 11,
      requestTimeoutMs: 5_000,
      actors: { maxThreads: 2, shareThreads: false, stuckAfterMs: 5_000 },
      sandbox: { maxima: { memoryMb: 100, cpuMs: 1_000, wallMs: 30_000 } },
      placement: { internalListen: '127.0.0.1', internalAdvertise: '127.0.0.1' },
      databaseUrl: null,
      envExplicit: false,
    });
  });

  it('reads PORT when neither --port nor ANVIL_PORT is given', () => {
    expect(startValues([], { PORT: '7000' }).port).toBe(7000);
    expect(startValues([], { PORT: '7000', ANVIL_PORT: '7001' }).port).toBe(7001);
    expect(startValues(['--port', '7002'], { PORT: '7000' }).port).toBe(7002);
    expect(errorOf([], { PORT: 'bogus' })).toBe('PORT must be an integer from 0 to 65535, got "bogus"');
  });

  it("shows its groups, each option's default and the variables that are no flag in --help", () => {
    let help = '';
    const program = new Command().exitOverride().configureOutput({ writeOut: (text) => (help += text) });
    registerStart(program);
    expect(() => program.parse(['start', '--help'], { from: 'user' })).toThrow('(outputHelp)');
    const headings = help.split('\n').filter((line) => /^\S.*:$/.test(line));
    expect(headings).toEqual([
      ...Object.values(START_GROUPS).map((title) => `${title}:`),
      'Options:',
      'Environment variables (no flag):',
      'Example:',
    ]);
    expect(help.replace(/\s+/g, ' ')).toContain('(default: 1MiB, env: ANVIL_BODY_LIMIT)');
    expect(help.replace(/\s+/g, ' ')).toContain('(default: the number of CPUs, env: ANVIL_CELLS)');
    for (const [, option] of options.filter(([, o]) => o.flag === null))
      expect(help.slice(help.indexOf('Environment variables (no flag):'))).toContain(`  ${option.env} `);
  });
});
