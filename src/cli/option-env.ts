import { Option, type Command } from 'commander';

/** `--max-threads` → `ANVIL_MAX_THREADS`. */
export function envVariableOf(longFlag: string): string {
  return `ANVIL_${longFlag.replace(/^--/, '').replace(/-/g, '_').toUpperCase()}`;
}

/**
 * Every long option added to `command` from now on gets an environment variable (`--port` →
 * `ANVIL_PORT`), which `--help` shows; a flag on the command line wins over its variable, the
 * variable over the default. A boolean flag is on when its variable is set to anything but "", "0"
 * or "false". (commander binds a variable when the option is added, hence `createOption`.)
 */
export function optionsFromEnvironment(command: Command, env: NodeJS.ProcessEnv = process.env): Command {
  command.createOption = (flags: string, description?: string): Option => {
    const option = new Option(flags, description);
    if (option.long === undefined || option.long === '--help') return option;
    const name = envVariableOf(option.long);
    // commander turns a boolean flag on whenever its variable exists: "", "0" and "false" must not.
    if (option.isBoolean() && ['', '0', 'false'].includes(env[name]?.toLowerCase() ?? 'unset')) delete env[name];
    return option.env(name);
  };
  return command;
}
