import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';
import { waitFor } from './wait-for.js';

/**
 * A Redis of the test's own (redis-server on a free port, nothing on disk), so a fault test can
 * stop, pause and restart it without touching the machine's shared Redis.
 */
export class PrivateRedis {
  private child: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.resume();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts (or restarts after `kill`) the server on the same port, empty. */
  async resume(): Promise<void> {
    this.child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    await waitFor(() => this.ping(), { what: `redis-server on port ${this.port}` });
  }

  /** The process stops answering but keeps its connections open (a hung server). */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  unpause(): void {
    this.child?.kill('SIGCONT');
  }

  /** Gone: connections reset, the port refuses. Its data is lost (nothing on disk). */
  async kill(): Promise<void> {
    const child = this.child;
    if (child === null || child.exitCode !== null) return;
    child.kill('SIGCONT');
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }

  async ping(): Promise<boolean> {
    const client = new Redis(this.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      connectTimeout: 500,
    });
    client.on('error', () => {});
    try {
      await client.connect();
      return (await client.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      client.disconnect();
    }
  }
}
