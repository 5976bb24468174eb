import { Option, type Command } from 'commander';
import { readInstanceEnvironment } from './environment.js';
import { argument, toggle } from './options.js';
import { defaultText, START_GROUPS, type StartOption, type ValuesOf } from './start-option.js';
import { START_FLAGS, START_VARIABLES, type StartValues } from './start-table.js';

/**
 * Adds the table's flags to `command`, grouped in --help, each with its variable (which --help
 * shows): the command line wins over the variable, the variable over the default. A boolean flag is
 * on when its variable is set to anything but "", "0" or "false".
 */
export function addStartFlags(command: Command, env: NodeJS.ProcessEnv = process.env): Command {
  for (const option of Object.values(START_FLAGS)) command.addOption(commanderOption(option, env));
  return command;
}

/** Doc text for a terminal. */
const plain = (markdown: string) => markdown.replace(/`/g, '');

function commanderOption(option: StartOption<unknown>, env: NodeJS.ProcessEnv): Option {
  const made = new Option(option.flag!, plain(option.doc)).env(option.env).helpGroup(`${START_GROUPS[option.group]}:`);
  // commander turns a boolean flag on whenever its variable exists: "", "0" and "false" must not.
  if (made.isBoolean()) {
    if (env[option.env] !== undefined && !toggle.read(env[option.env]!, option.env)) delete env[option.env];
  } else {
    made.argParser(argument(made.long!, option.parse));
  }
  return made.default(option.default, plain(defaultText(option)));
}

/** --help's list of the variables that are no flag, laid out as commander lays out the options. */
export function variablesHelp(command: Command): string {
  const help = command.createHelp();
  const width = help.padWidth(command, help);
  const items = Object.values(START_VARIABLES).map((option) =>
    help.formatItem(option.env, width, `${plain(option.doc)} (default: ${plain(defaultText(option))})`, help),
  );
  return `\nEnvironment variables (no flag):\n${items.join('\n')}`;
}

/** Every option's value, read once: the parsed command line, the variables behind it, and the variables that are no flag. */
export function readStartValues(command: Command, env: NodeJS.ProcessEnv = process.env): StartValues {
  const parsed = command.opts();
  const flags: Record<string, unknown> = {};
  for (const [name, option] of Object.entries(START_FLAGS)) {
    const fallback = option.fallbackEnv === null ? undefined : env[option.fallbackEnv];
    flags[name] =
      command.getOptionValueSource(name) === 'default' && fallback !== undefined
        ? option.parse.read(fallback, option.fallbackEnv!)
        : parsed[name];
  }
  return { ...(flags as ValuesOf<typeof START_FLAGS>), ...readInstanceEnvironment(env) };
}
