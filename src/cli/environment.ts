import { START_VARIABLES, type StartVariableValues } from './start-table.js';

/**
 * The environment `anvil start` (and the commands that open the same stores) reads beyond its
 * flags' variables: START_VARIABLES, here, once. The instance gets these values as options; only
 * child processes see `process.env` again.
 */
export type InstanceEnvironment = StartVariableValues;

/** Each variable read with its parser (an error names the variable), else its default. */
export function readInstanceEnvironment(env: NodeJS.ProcessEnv = process.env): InstanceEnvironment {
  const values: Record<string, unknown> = {};
  for (const [name, option] of Object.entries(START_VARIABLES)) {
    const text = env[option.env];
    values[name] = text === undefined ? option.default : option.parse.read(text, option.env);
  }
  return values as InstanceEnvironment;
}
