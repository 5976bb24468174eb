import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { waitFor } from '../helpers/wait-for.js';

// Three instances on one Redis (a prefix of this run) share what keeps one API from hurting the
// others: the per-API job limit (one run of an API at a time, in the whole cluster) and the
// quarantine and pause decisions about an API that kills its cells.

const REDIS_URL = process.env.ANVIL_TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUN_MS = 200;

/** The upstream jobs call: it keeps who ran which job, and how many runs it saw at once. */
class RunCounter {
  readonly runs: Array<{ id: string; by: string }> = [];
  running = 0;
  maxRunning = 0;
  private readonly server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://upstream');
    this.running += 1;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    setTimeout(() => {
      this.running -= 1;
      this.runs.push({ id: url.searchParams.get('id') ?? '', by: url.searchParams.get('by') ?? '' });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    }, RUN_MS);
  });

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const worker = (upstreamPort: number) => ({
  'api.yaml': `key: worker
endpoints:
  get /ping:
    Ping: { directive: Ping }
  post /work:
    Queue: { directive: ForTheWorker, identifier: true }
    Run: { directive: Pull, host: "http://127.0.0.1:${upstreamPort}", path: /run, queryParams: { id: $.id, by: $.memory.anvil-localhost }, target: ran, timeout: 10 }
`,
});

const killers = join(import.meta.dirname, '../fixtures/apis/killers/Directives');
const BOMB = {
  'api.yaml': `key: bomb
limits: { memoryMb: 32, cpuMs: 5000, wallMs: 10000 }
endpoints:
  get /explode:
    Try: { directive: ArrayFill }
  get /ping:
    Ping: { directive: Ping }
`,
  'Directives/ArrayFill.js': readFileSync(join(killers, 'ArrayFill.js'), 'utf8'),
};

describe('three instances sharing Redis', () => {
  const instances: TestInstance[] = [];
  const counter = new RunCounter();

  beforeAll(async () => {
    const upstreamPort = await counter.listen();
    const env = { REDIS_URL, ANVIL_REDIS_PREFIX: `anvil-test-${randomUUID()}:`, ANVIL_EGRESS_ALLOW: '127.0.0.1' };
    // As in test/http/sandbox-fatal.test.ts: room for the allocation to abort its cell, and for
    // cold starts on a loaded machine.
    const args = ['--cells', '1', '--request-timeout', '20s', '--max-directive-cpu', '10s'];
    for (let i = 0; i < 3; i++)
      instances.push(await startInstance({ apis: { worker: worker(upstreamPort), bomb: BOMB }, env, args }));
    for (const anvil of instances) expect((await anvil.request('/worker/ping')).status).toBe(200);
  });

  afterAll(async () => {
    await Promise.all(instances.map((a) => a.dispose()));
    await counter.close();
  });

  it('20 jobs queued through different instances each run exactly once, one at a time in the whole cluster', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const reply = await instances[i % 3]!.request('/worker/work', {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
      expect(reply.status).toBe(202);
      ids.push(reply.json().id);
    }
    await waitFor(() => counter.runs.length >= 20, { what: '20 job runs', timeoutMs: 60_000 });
    // Time for a second run of any of them to show.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(counter.runs.map((r) => r.id).sort()).toEqual([...ids].sort());
    // The per-API limit (one run at a time) held across the instances…
    expect(counter.maxRunning).toBe(1);
    // …which did share the work: the limit was not one instance's.
    expect(new Set(counter.runs.map((r) => r.by)).size).toBeGreaterThanOrEqual(2);
  }, 90_000);

  it('an API paused by one instance answers the pause status on the others, for the same time, then answers everywhere again', async () => {
    const [one, two, three] = instances as [TestInstance, TestInstance, TestInstance];
    for (const anvil of instances) expect((await anvil.request('/bomb/ping')).status).toBe(200);
    const logged = (anvil: TestInstance, msg: string) =>
      anvil.logLines().filter((l) => l.msg === msg && l.api === 'bomb');

    // Its first crash, on one: quarantined there, and on the others too.
    expect((await one.request('/bomb/explode')).status).toBe(502);
    await waitFor(() => logged(one, 'API quarantined in a cell of its own')[0], { what: 'the quarantine' });
    for (const other of [two, three])
      await waitFor(() => logged(other, 'API quarantined by another instance')[0], {
        what: 'the quarantine on the others',
      });

    // Its second, in its quarantine cell on one: paused 1 s (strike 1), everywhere.
    await waitFor(async () => (await one.request('/bomb/ping')).status === 200, {
      what: 'the API back in a quarantine cell',
    });
    expect((await one.request('/bomb/explode')).status).toBe(502);
    await waitFor(() => logged(one, 'API killed its quarantine cell again; paused')[0], { what: 'the first pause' });
    for (const other of [two, three])
      await waitFor(() => logged(other, 'API paused by another instance')[0], {
        what: 'the first pause on the others',
      });

    // Once it is over, two (where it is quarantined too) sees a third crash: strike 2, a 2 s pause.
    await waitFor(async () => (await two.request('/bomb/ping')).status === 200, {
      what: 'the first pause to end',
      timeoutMs: 10_000,
    });
    expect((await two.request('/bomb/explode')).status).toBe(502);
    const crashed = Date.now();
    expect(
      await waitFor(() => logged(two, 'API killed its quarantine cell again; paused')[0], { what: 'the second pause' }),
    ).toMatchObject({ pausedMs: 2_000 });

    // One and three refuse it at once (the same 503 as two's), until the pause is over.
    type Answer = { status: number; sentAt: number; at: number; retryAfter: string | undefined };
    const answers = new Map<TestInstance, Answer[]>([
      [one, []],
      [three, []],
    ]);
    await Promise.all(
      [...answers].map(async ([anvil, seen]) => {
        while (Date.now() - crashed < 15_000 && seen.at(-1)?.status !== 200) {
          const sentAt = Date.now();
          const reply = await anvil.request('/bomb/ping');
          seen.push({
            status: reply.status,
            sentAt,
            at: Date.now(),
            retryAfter: reply.headers['retry-after'] as string | undefined,
          });
          if (reply.status === 503) expect(reply.json().error).toMatch(/paused/);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }),
    );
    for (const seen of answers.values()) {
      const paused = seen.filter((a) => a.status === 503);
      expect(paused.length).toBeGreaterThan(0);
      expect(paused[0]!.at - crashed).toBeLessThan(2_000);
      expect(Number(paused[0]!.retryAfter)).toBeGreaterThanOrEqual(1);
      // Paused for the same time as on two (2 s from its decision), not less…
      expect(paused.at(-1)!.sentAt - crashed).toBeGreaterThan(1_000);
      // …and answering again once it is over (the answer itself may wait for a new quarantine cell).
      expect(seen.at(-1)!.status).toBe(200);
      expect(seen.at(-1)!.sentAt - crashed).toBeLessThan(2_000 + 1_500);
      expect(seen.filter((a) => a.status !== 503 && a.status !== 200)).toEqual([]);
    }
    expect((await two.request('/bomb/ping')).status).toBe(200);
    for (const anvil of instances) expect(anvil.child.exitCode).toBeNull();
  }, 90_000);
});
