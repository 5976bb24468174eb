import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { InvalidArgumentError } from 'commander';
import { CliError } from './output.js';

/**
 * Where an environment (`dev`, `pro`, …) is deployed to (SPEC §9): `DEPLOY_ENDPOINT_<ENV>`,
 * `PUBLIC_HOST_<ENV>` and `API_KEY_<ENV>`, from the process environment or from `.env` in the
 * current directory — the environment wins, as with dotenv (a CI secret overrides the file).
 */
export interface DeployTarget {
  /** The env as given on the command line, lower-cased (`dev`): also the env local validation uses. */
  env: string;
  /** `http://admin.localhost:8080/anvil/api` (no trailing slash). */
  endpoint: string;
  publicHost: string;
  key: string;
  /** The variable names, for messages (`API_KEY_DEV`). */
  names: { endpoint: string; publicHost: string; key: string };
}

/** The ENV argument: letters, digits, `_` or `-`; `dev` and `DEV` name the same env. */
export function envArgument(value: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/.test(value)) {
    throw new InvalidArgumentError(`ENV must be letters, digits, _ or - (e.g. dev, pro), got "${value}"`);
  }
  return value.toLowerCase();
}

/** The variables of `.env` in `dir` (dotenv format, read by Node's own parser); none when there is no file. */
export function readDotEnv(dir: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(join(dir, '.env'), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CliError(`cannot read ${join(dir, '.env')}: ${(error as Error).message}`);
  }
  const parsed = parseEnv(text);
  const vars: Record<string, string> = {};
  for (const [name, value] of Object.entries(parsed)) if (value !== undefined) vars[name] = value;
  return vars;
}

export function deployTarget(env: string, cwd = process.cwd()): DeployTarget {
  const suffix = env.toUpperCase().replace(/-/g, '_');
  const names = {
    endpoint: `DEPLOY_ENDPOINT_${suffix}`,
    publicHost: `PUBLIC_HOST_${suffix}`,
    key: `API_KEY_${suffix}`,
  };
  const file = readDotEnv(cwd);
  const read = (name: string) => {
    const value = process.env[name] ?? file[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const endpoint = read(names.endpoint);
  const publicHost = read(names.publicHost);
  const key = read(names.key);
  const missing = Object.values(names).filter((name) => read(name) === undefined);
  if (endpoint === undefined || publicHost === undefined || key === undefined) {
    throw new CliError(
      `env "${env}" is not configured: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set (in ${join(cwd, '.env')} or the environment)`,
      [
        'a .env for it looks like:',
        `  ${names.endpoint}=http://admin.localhost:8080/anvil/api`,
        `  ${names.publicHost}=localhost`,
        `  ${names.key}=<the public host key>`,
      ],
    );
  }
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new CliError(
      `${names.endpoint} must be a URL such as http://admin.localhost:8080/anvil/api, got "${endpoint}"`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(`${names.endpoint} must be an http:// or https:// URL, got "${endpoint}"`);
  }
  return { env, endpoint: endpoint.replace(/\/+$/, ''), publicHost, key, names };
}
