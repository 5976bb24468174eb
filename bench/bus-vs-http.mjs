// Issue 7, item 6: an inter-API Pull over the in-process bus versus the same call over loopback
// HTTP. bench/apis/caller calls bench/apis/target (GET /target/ping) with Pull, either with
// `host: $.memory.anvil-localhost` (the bus: actor thread → router over its socket → target's
// thread → back) or with `host: http://127.0.0.1:<port>` (undici from the caller's thread to the
// router's HTTP port, through the egress policy with ANVIL_EGRESS_ALLOW=127.0.0.1; the router
// serves it on an admin host named 127.0.0.1, with the public host's credentials).
//
// Per run, alternating: sequential requests (one connection, BENCH_SECONDS each) to /caller/none,
// /caller/bus5 and /caller/http5 — the cost of one call is (p50 of five calls − p50 of none) / 5;
// then the saturated throughput (wrk) of /caller/bus and /caller/http (one call each).
import { availableParallelism } from 'node:os';
import { progress, standalone } from './lib/config.mjs';
import { PUBLIC_HOST_KEY, anvilCli, confine, descendants, freePort, get, startAnvil } from './lib/instance.mjs';
import { closedLoop, saturate } from './lib/load.mjs';
import { median } from './lib/stats.mjs';
import { checkTarget, fmt, ms, ratio } from './lib/targets.mjs';

const PONG = '{"message":"pong"}';

export async function run(config) {
  const { seconds, runs, connections } = config;
  const port = await freePort();
  progress('bus: starting Anvil with caller and target, and an admin host 127.0.0.1');
  const anvil = await startAnvil({
    port,
    apis: [
      { from: 'target' },
      { from: 'caller', maps: { main: { loopback: `http://127.0.0.1:${port}`, hostKey: PUBLIC_HOST_KEY } } },
    ],
    env: { ANVIL_EGRESS_ALLOW: '127.0.0.1' },
    beforeStart: (dataDir) => anvilCli(['hosts', 'add-admin', '127.0.0.1', '--data', dataDir]),
  });
  try {
    for (const path of ['/none', '/bus', '/http', '/bus5', '/http5']) {
      const reply = await get(port, `/caller${path}`);
      if (reply.status !== 200 || reply.body !== PONG)
        throw new Error(`GET /caller${path} answered ${reply.status} ${reply.body}\n${anvil.log()}`);
    }
    // Warm-up: threads of both APIs (two each), undici's pool, the JIT.
    for (const path of ['/bus', '/http', '/bus5', '/http5'])
      await saturate(anvil.url(`/caller${path}`), { seconds: Math.min(2, seconds), connections });

    const perRun = [];
    for (let i = 0; i < runs; i++) {
      const r = { seq: {}, max: {} };
      for (const path of ['none', 'bus5', 'http5'])
        r.seq[path] = await closedLoop(anvil.url(`/caller/${path}`), { seconds });
      for (const path of ['bus', 'http'])
        r.max[path] = await saturate(anvil.url(`/caller/${path}`), { seconds, connections });
      r.busCall = (r.seq.bus5.p50 - r.seq.none.p50) / 5;
      r.httpCall = (r.seq.http5.p50 - r.seq.none.p50) / 5;
      progress(
        `bus run ${i + 1}/${runs}: one call ${fmt(r.busCall, 3)} ms over the bus, ${fmt(r.httpCall, 3)} ms over loopback HTTP; saturated ${fmt(r.max.bus.rps)} vs ${fmt(r.max.http.rps)} req/s`,
      );
      perRun.push(r);
    }

    // Control: the same sequential calls with the instance and this client confined to one CPU. It
    // shows what waking a thread on the other CPU costs on this machine: each call wakes one more
    // thread over HTTP than over the bus (four against two).
    const oneCpu = [];
    const restore =
      availableParallelism() > 1 ? confine([process.pid, anvil.pid, ...descendants(anvil.pid)], '0') : null;
    if (restore !== null) {
      try {
        for (let i = 0; i < runs; i++) {
          const seq = {};
          for (const path of ['none', 'bus5', 'http5'])
            seq[path] = await closedLoop(anvil.url(`/caller/${path}`), { seconds });
          const r = { busCall: (seq.bus5.p50 - seq.none.p50) / 5, httpCall: (seq.http5.p50 - seq.none.p50) / 5 };
          progress(
            `bus control ${i + 1}/${runs}, one CPU: one call ${fmt(r.busCall, 3)} ms over the bus, ${fmt(r.httpCall, 3)} ms over loopback HTTP`,
          );
          oneCpu.push(r);
        }
      } finally {
        restore();
      }
    }

    const med = (f) => median(perRun.map(f));
    const errors = (f) => perRun.reduce((s, r) => s + f(r), 0);
    const callRatio = med((r) => r.httpCall / r.busCall);
    const rpsRatio = med((r) => r.max.bus.rps / r.max.http.rps);
    return {
      id: 'bus',
      title: '6. Inter-API Pull: bus vs loopback HTTP',
      tables: [
        {
          caption: `Sequential (one connection), median of ${perRun.length} runs`,
          columns: ['request', 'req/s', 'p50', 'p99', 'errors'],
          rows: [
            [
              'GET /caller/none (no call)',
              fmt(med((r) => r.seq.none.rps)),
              ms(med((r) => r.seq.none.p50)),
              ms(med((r) => r.seq.none.p99)),
              String(errors((r) => r.seq.none.errors)),
            ],
            [
              'GET /caller/bus5 (5 Pulls over the bus)',
              fmt(med((r) => r.seq.bus5.rps)),
              ms(med((r) => r.seq.bus5.p50)),
              ms(med((r) => r.seq.bus5.p99)),
              String(errors((r) => r.seq.bus5.errors)),
            ],
            [
              'GET /caller/http5 (5 Pulls over loopback HTTP)',
              fmt(med((r) => r.seq.http5.rps)),
              ms(med((r) => r.seq.http5.p50)),
              ms(med((r) => r.seq.http5.p99)),
              String(errors((r) => r.seq.http5.errors)),
            ],
          ],
        },
        {
          caption: 'One inter-API call',
          columns: ['', 'bus', 'loopback HTTP', 'HTTP ÷ bus'],
          rows: [
            [
              'time of one call, sequential ((p50 of 5 calls − p50 of none) / 5)',
              ms(med((r) => r.busCall)),
              ms(med((r) => r.httpCall)),
              ratio(callRatio),
            ],
            ...(oneCpu.length === 0
              ? []
              : [
                  [
                    'control: time of one call, sequential, with the instance and the client on one CPU (taskset -c 0)',
                    ms(median(oneCpu.map((r) => r.busCall))),
                    ms(median(oneCpu.map((r) => r.httpCall))),
                    ratio(median(oneCpu.map((r) => r.httpCall / r.busCall))),
                  ],
                ]),
            [
              `throughput of a request making one call (wrk -c${connections}); errors`,
              `${fmt(med((r) => r.max.bus.rps))} req/s; ${errors((r) => r.max.bus.errors)}`,
              `${fmt(med((r) => r.max.http.rps))} req/s; ${errors((r) => r.max.http.errors)}`,
              ratio(rpsRatio),
            ],
          ],
        },
      ],
      targets: [
        checkTarget({
          name: 'bus call vs loopback HTTP, same inter-API Pull (time per call, HTTP ÷ bus)',
          measured: callRatio,
          op: '>=',
          limit: 3,
          format: ratio,
          note: `under saturation the bus serves ${ratio(rpsRatio)} the requests/s`,
        }),
      ],
      notes: [
        "The loopback call goes through what any outgoing HTTP call of an API goes through (egress policy check, undici pool of the caller's thread) and enters the router like a client request; the admin host adds its credential check (two SHA-256 of short strings) — the bus needs neither.",
        ...(anvil.warnings() ? [`Anvil's log: ${anvil.warnings()}.`] : []),
      ],
      perRun: perRun.map(
        (r, i) =>
          `run ${i + 1}: p50 none ${fmt(r.seq.none.p50, 3)}, bus5 ${fmt(r.seq.bus5.p50, 3)}, http5 ${fmt(r.seq.http5.p50, 3)} ms; saturated bus ${fmt(r.max.bus.rps)}, http ${fmt(r.max.http.rps)} req/s${oneCpu[i] ? `; on one CPU one call ${fmt(oneCpu[i].busCall, 3)} ms over the bus, ${fmt(oneCpu[i].httpCall, 3)} ms over HTTP` : ''}`,
      ),
    };
  } finally {
    await anvil.stop();
  }
}

standalone(import.meta.url, run);
