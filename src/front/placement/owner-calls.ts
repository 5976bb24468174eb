import { Agent, request } from 'node:http';
import type { OwnerTarget } from './forward-to-owner.js';
import { CLUSTER_SECRET_HEADER, INTERNAL_OP_HEADER, PLACEMENT_EPOCH_HEADER } from './internal-headers.js';

/** The internal port's operations (internal-ops.ts): work of a placed API that did not come as an HTTP request. */
export const INTERNAL_OPS = { jobRun: 'job-run', busCall: 'bus-call' } as const;
export type InternalOp = (typeof INTERNAL_OPS)[keyof typeof INTERNAL_OPS];

/** A job run as it travels to the owner. */
export interface ForwardedJob {
  id: string;
  api: string;
  payload: string;
}

/**
 * How an operation sent to an owner ended. `answer`: the owner answered in full (200: it did the
 * work; another status: it refused, nothing ran). `unreachable`: no full answer (refused, reset):
 * the owner is gone or going, and may have started the work. `timeout`: no answer in time.
 */
export type OwnerAnswer =
  { kind: 'answer'; status: number; body: Buffer } | { kind: 'unreachable'; error: string } | { kind: 'timeout' };

/**
 * The client of the owners' internal ports for work that is not a client's request: a job run and
 * a bus call of a placed API, sent as a POST with the cluster secret, the operation and the epoch
 * this instance knows, read back in full (a job's outcome, a bus answer: both small, bounded).
 */
export class OwnerCalls {
  private readonly agent = new Agent({ keepAlive: true, keepAliveMsecs: 1_000, maxSockets: 256 });

  constructor(
    private readonly secret: string,
    /** How long the owner has: its own request timeout (504) comes first. */
    private readonly timeoutMs: number,
  ) {}

  send(
    target: OwnerTarget,
    op: InternalOp,
    body: readonly Buffer[],
    headers: Record<string, string> = {},
  ): Promise<OwnerAnswer> {
    const url = new URL(target.url);
    const size = body.reduce((sum, chunk) => sum + chunk.length, 0);
    return new Promise((resolve) => {
      let settled = false;
      const settle = (answer: OwnerAnswer): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(answer);
      };
      const out = request({
        host: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port,
        method: 'POST',
        path: '/',
        agent: this.agent,
        headers: {
          ...headers,
          [CLUSTER_SECRET_HEADER]: this.secret,
          [INTERNAL_OP_HEADER]: op,
          [PLACEMENT_EPOCH_HEADER]: String(target.epoch),
          'content-type': 'application/octet-stream',
          'content-length': String(size),
        },
      });
      const timer = setTimeout(() => {
        settle({ kind: 'timeout' });
        out.destroy();
      }, this.timeoutMs);
      out.on('response', (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () =>
          settle(
            answer.complete
              ? { kind: 'answer', status: answer.statusCode ?? 502, body: Buffer.concat(chunks) }
              : { kind: 'unreachable', error: 'the answer was cut' },
          ),
        );
        answer.on('error', (error) => settle({ kind: 'unreachable', error: error.message }));
        answer.on('close', () => settle({ kind: 'unreachable', error: 'the answer was cut' }));
      });
      out.on('error', (error) => settle({ kind: 'unreachable', error: error.message }));
      for (const chunk of body) out.write(chunk);
      out.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
