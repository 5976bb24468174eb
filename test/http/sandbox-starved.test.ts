import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cellPid } from '../helpers/cells.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { sample, scrapeMetrics } from '../helpers/metrics.js';
import { untilNotBusy } from '../helpers/until-not-busy.js';
import { waitFor } from '../helpers/wait-for.js';

// A custom directive's timeout runs on the clock, its CPU limit on the thread's CPU clock: a call
// the timeout stopped while its thread mostly waited for a core was starved, not guilty. Starving
// is done here by stopping the cell 99 ms of every 100 (SIGSTOP/SIGCONT), so that a runaway loop
// runs ~1 % of its 310 ms timeout, whatever the machine's speed.
let anvil: TestInstance;

beforeAll(async () => {
  anvil = await startInstance({
    apis: {
      starved: {
        'api.yaml':
          'key: starved\nlimits: { cpuMs: 300, wallMs: 20000 }\nendpoints:\n  get /loop:\n    Loop: { directive: Loop }\n  get /ok:\n    Ok: { directive: Ok }\n',
        'Directives/Loop.js': 'export default function () { for (;;) {} }',
        'Directives/Ok.js': 'export default function (state) { state.message.body = { ok: true }; }',
      },
    },
    args: ['--cells', '1', '--request-timeout', '30s'],
  });
});

afterAll(async () => {
  await anvil?.dispose();
});

/** Stops `pid` for `stoppedMs` of every 100 ms until `end()`, which lets it run again. */
function starve(pid: number, stoppedMs: number): { end(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout;
  const flip = () => {
    stopped = !stopped;
    process.kill(pid, stopped ? 'SIGSTOP' : 'SIGCONT');
    timer = setTimeout(flip, stopped ? stoppedMs : 100 - stoppedMs);
  };
  flip();
  return {
    end() {
      clearTimeout(timer);
      process.kill(pid, 'SIGCONT');
    },
  };
}

const cpuBreaches = async () =>
  sample(await scrapeMetrics(anvil), 'anvil_sandbox_breaches_total', {
    host: 'localhost',
    api: 'starved',
    kind: 'cpu',
  }) ?? 0;

describe('a runaway custom directive', () => {
  it('on a thread that runs: a CPU breach (500), counted', async () => {
    expect((await untilNotBusy(() => anvil.request('/starved/loop'))).status).toBe(500);
    await waitFor(() => anvil.output().includes('Loop used more than its 300 ms of CPU time'), {
      what: 'the breach in the log',
    });
    // Breaches reach the metrics with the thread's next report (every 2 s).
    await waitFor(async () => (await cpuBreaches()) === 1, { what: 'one CPU breach counted', timeoutMs: 10_000 });
  });

  it('on a starved thread: 503 (busy), no breach counted, and the next call is served', async () => {
    const starving = starve(cellPid(anvil.pid, 0), 99);
    let reply;
    try {
      reply = await anvil.request('/starved/loop');
    } finally {
      starving.end();
    }
    expect(reply.status).toBe(503);
    await waitFor(
      () =>
        /Loop was stopped after \d+ ms in which the busy host ran it for only [\d.]+ ms; retry/.test(anvil.output()),
      {
        what: 'the busy stop in the log',
      },
    );
    expect((await anvil.request('/starved/ok')).json()).toEqual({ ok: true });
    // A real-time wait: the thread's next report (every 2 s) would carry a breach, were one counted.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(await cpuBreaches()).toBe(1);
    expect(anvil.output().match(/over its cpu limit/g)).toHaveLength(1);
  });
});
