import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.js';

const CONFIG = join(resolve(dirname(fileURLToPath(import.meta.url)), '../..'), 'deploy/haproxy.cfg');

/** True when the `haproxy` binary runs here (.ci/run installs Debian's package when it is missing). */
export function haproxyInstalled(): boolean {
  return spawnSync('haproxy', ['-v'], { stdio: 'ignore' }).status === 0;
}

export interface RunningHaproxy {
  port: number;
  output(): string;
  stop(): Promise<void>;
}

/** Runs deploy/haproxy.cfg as shipped, in the foreground, in front of three instances' ports. */
export async function startHaproxy(backendPorts: [number, number, number]): Promise<RunningHaproxy> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, HAPROXY_BIND: `127.0.0.1:${port}` };
  backendPorts.forEach((p, i) => (env[`ANVIL_${i + 1}`] = `127.0.0.1:${p}`));
  const child: ChildProcess = spawn('haproxy', ['-db', '-f', CONFIG], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    port,
    output: () => output,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
