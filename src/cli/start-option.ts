import type { Parser } from './options.js';

/** The groups of `anvil start`'s options, in the order --help and docs/operate.md list them. */
export const START_GROUPS = {
  instance: 'The instance',
  network: 'Network',
  requests: 'Requests and responses',
  deploys: 'Deploys',
  cells: 'Cells and threads',
  sandbox: 'Custom directives',
  jobs: 'Jobs',
  storage: 'Storage quotas',
  logs: 'Logs and audit',
  cluster: 'Shared stores and cluster mode',
} as const;

export type StartGroup = keyof typeof START_GROUPS;

/** One row of the options table (start-table.ts). */
export interface StartOption<T> {
  /** commander's flags (`--port <n>`, `--publish`); null: an environment variable only. */
  flag: string | null;
  /** Its environment variable: a flag's is named after it (`--max-threads` → `ANVIL_MAX_THREADS`). */
  env: string;
  /** Read when neither the flag nor its variable is given (PORT, as platforms set it). */
  fallbackEnv: string | null;
  parse: Parser<T>;
  /** The value when nothing sets it. */
  default: T;
  /** What --help and the docs say the default is (markdown); unset: `parse.show(default)`. */
  defaultDoc: string | null;
  group: StartGroup;
  doc: string;
}

interface Declared<T> {
  parse: Parser<T>;
  group: StartGroup;
  doc: string;
  /** Where the default is worked out at start, or none: say what applies. */
  defaultDoc?: string;
}

/** A flag and its variable; `default: null` when it has none (then `defaultDoc` says what applies). */
export function flag<T extends NonNullable<unknown>>(
  spec: Declared<T> & { flag: string; default: T; fallbackEnv?: string },
): StartOption<T>;
export function flag<T>(spec: Declared<T> & { flag: string; default: null; defaultDoc: string }): StartOption<T | null>;
export function flag<T>(
  spec: Declared<T> & { flag: string; default: T | null; fallbackEnv?: string },
): StartOption<T | null> {
  return { ...row(spec), flag: spec.flag, env: envVariableOf(spec.flag), fallbackEnv: spec.fallbackEnv ?? null };
}

/** An environment variable that is no flag. */
export function variable<T extends NonNullable<unknown>>(
  spec: Declared<T> & { env: string; default: T },
): StartOption<T>;
export function variable<T>(
  spec: Declared<T> & { env: string; default: null; defaultDoc: string },
): StartOption<T | null>;
export function variable<T>(spec: Declared<T> & { env: string; default: T | null }): StartOption<T | null> {
  return { ...row(spec), flag: null, env: spec.env, fallbackEnv: null };
}

function row<T>(
  spec: Declared<T> & { default: T | null },
): Omit<StartOption<T | null>, 'flag' | 'env' | 'fallbackEnv'> {
  return {
    parse: spec.parse as Parser<T | null>,
    default: spec.default,
    defaultDoc: spec.defaultDoc ?? null,
    group: spec.group,
    doc: spec.doc,
  };
}

/** `--max-threads <n>` → `ANVIL_MAX_THREADS`. */
function envVariableOf(flagText: string): string {
  return `ANVIL_${flagText.split(' ')[0]!.replace(/^--/, '').replace(/-/g, '_').toUpperCase()}`;
}

/** The values a table of options gives, by the names of its rows. */
export type ValuesOf<Table extends Record<string, StartOption<unknown>>> = {
  -readonly [K in keyof Table]: Table[K] extends StartOption<infer T> ? T : never;
};

/** The text --help and the docs give as an option's default. */
export function defaultText(option: StartOption<unknown>): string {
  return option.defaultDoc ?? `\`${option.parse.show(option.default)}\``;
}
