// Issue 21: the edges. A neighbour API (bench/apis/bare, GET /ping) is measured at a fixed rate,
// open loop, alone and while another tenant deploys hostile files back to back — one kind per phase
// (bench/lib/hostile.mjs: many keys, deep nesting, an alias bomb, big, deep and wide Maps, and a
// large file within the limits). Unpacking and validating run in the deploy worker under the
// structural limits and the time budget; the router's event loop, which every request crosses, must
// not notice: the target is the neighbour's max latency under 100 ms in every phase, with no error.
import http from 'node:http';
import { progress, standalone } from './lib/config.mjs';
import { PUBLIC_HOST_KEY, startAnvil } from './lib/instance.mjs';
import { HOSTILE_KINDS, tarGz } from './lib/hostile.mjs';
import { openLoop } from './lib/load.mjs';
import { median } from './lib/stats.mjs';
import { checkTarget, fmt, ms } from './lib/targets.mjs';

const RATE = 200; // the neighbour's requests per second

export async function run(config) {
  const { seconds, runs } = config;
  const kinds = HOSTILE_KINDS.map((kind) => ({ ...kind, archive: tarGz(kind.files()) }));
  progress(`edges: starting Anvil with the neighbour (bare); ${kinds.length} hostile kinds, archives ${kinds.map((k) => `${fmt(k.archive.length / 1024)} KiB`).join(', ')}`);
  const anvil = await startAnvil({ apis: [{ from: 'bare' }], readyPath: '/bare/ping' });
  try {
    const neighbour = anvil.url('/bare/ping');
    await openLoop(neighbour, { rate: RATE, seconds: 1, warmup: 0 }); // the neighbour's thread and JIT

    const perRun = [];
    for (let i = 0; i < runs; i++) {
      const r = { alone: await openLoop(neighbour, { rate: RATE, seconds }), kinds: [] };
      for (const kind of kinds) {
        const deploying = deployLoop(anvil.port, kind.archive);
        const probe = await openLoop(neighbour, { rate: RATE, seconds });
        const deploys = await deploying.stop();
        r.kinds.push({ probe, deploys });
        const wrong = deploys.filter((d) => d.status !== kind.status);
        if (wrong.length > 0) throw new Error(`${kind.name}: a deploy answered ${wrong[0].status} (expected ${kind.status}): ${wrong[0].body}`);
      }
      progress(`edges run ${i + 1}/${runs}: neighbour alone p99 ${fmt(r.alone.p99, 2)} ms, max ${fmt(r.alone.max, 2)} ms; ${kinds.map((k, j) => `${k.name.split(':')[0]} max ${fmt(r.kinds[j].probe.max, 1)} ms (${r.kinds[j].deploys.length} deploys)`).join('; ')}`);
      perRun.push(r);
    }

    const med = (f) => median(perRun.map(f));
    const worst = (f) => Math.max(...perRun.map(f));
    const errors = (f) => perRun.reduce((sum, r) => sum + f(r).errors, 0);
    const rows = [
      ['alone', '', '', ms(med((r) => r.alone.p50)), ms(med((r) => r.alone.p99)), ms(worst((r) => r.alone.max)), String(errors((r) => r.alone))],
      ...kinds.map((kind, j) => {
        const deploys = perRun.flatMap((r) => r.kinds[j].deploys);
        return [
          kind.name,
          `${Math.round(deploys.length / perRun.length)} × ${kind.status}`,
          ms(median(deploys.map((d) => d.ms))),
          ms(med((r) => r.kinds[j].probe.p50)),
          ms(med((r) => r.kinds[j].probe.p99)),
          ms(worst((r) => r.kinds[j].probe.max)),
          String(errors((r) => r.kinds[j].probe)),
        ];
      }),
    ];
    const worstMax = Math.max(...kinds.map((_, j) => worst((r) => r.kinds[j].probe.max)));
    const hostileErrors = kinds.reduce((sum, _, j) => sum + errors((r) => r.kinds[j].probe), 0);
    return {
      id: 'edges',
      title: '8. Edges: a neighbour while another tenant deploys hostile files',
      tables: [
        {
          caption: `Neighbour = GET /bare/ping at ${RATE} req/s, open loop, ${seconds} s per phase, while one client posts the phase's archive to POST /anvil/api again as soon as it is answered; p50 and p99 the median of ${perRun.length} runs, max the worst of them`,
          columns: ['hostile deploy', 'deploys per phase', 'deploy answered in (median)', 'neighbour p50', 'p99', 'max', 'errors'],
          rows,
        },
      ],
      targets: [
        checkTarget({ name: "edges: the neighbour's max latency while hostile deploys run (worst phase, worst run)", measured: worstMax, op: '<', limit: 100, format: ms }),
        checkTarget({ name: 'edges: neighbour requests that failed while hostile deploys ran', measured: hostileErrors, op: '<=', limit: 0, format: (x) => fmt(x) }),
      ],
      notes: [
        'Each archive is refused with 400 naming the file, the line and the limit (the last kind is deployed: 201), in the deploy worker: the router only receives the bytes, hands them over and records the result.',
        ...(anvil.warnings() ? [`Anvil's log: ${anvil.warnings()}.`] : []),
      ],
      perRun: perRun.map((r, i) => `run ${i + 1}: alone p99 ${fmt(r.alone.p99, 2)} / max ${fmt(r.alone.max, 2)} ms; ${kinds.map((k, j) => `${k.name.split(':')[0]}: p99 ${fmt(r.kinds[j].probe.p99, 2)} / max ${fmt(r.kinds[j].probe.max, 2)} ms, ${r.kinds[j].deploys.length} deploys`).join('; ')}`),
    };
  } finally {
    await anvil.stop();
  }
}

/** Posts `archive` again and again until stopped; stop() resolves to [{ status, ms, body }]. */
function deployLoop(port, archive) {
  let running = true;
  const done = [];
  const loop = (async () => {
    while (running) done.push(await postArchive(port, archive));
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return done;
    },
  };
}

function postArchive(port, archive) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/anvil/api',
        headers: { host: 'admin.localhost', 'public-host': 'localhost', 'public-host-key': PUBLIC_HOST_KEY, 'content-type': 'application/gzip', 'content-length': archive.length },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - t0, body: body.slice(0, 300) }));
      },
    );
    req.on('error', reject);
    req.end(archive);
  });
}

standalone(import.meta.url, run);
