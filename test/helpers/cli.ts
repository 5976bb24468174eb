import { spawnSync } from 'node:child_process';
import { ANVIL_BIN } from './instance.js';

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real `anvil` command. */
export function anvilCli(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): CliResult {
  const result = spawnSync(process.execPath, [ANVIL_BIN, ...args], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
