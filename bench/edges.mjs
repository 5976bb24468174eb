// Issue 21: the edges. A neighbour API (bench/apis/bare, GET /ping) is measured at a fixed rate,
// open loop, alone and while another tenant deploys hostile files back to back — one kind per phase
// (bench/lib/hostile.mjs: many keys, deep nesting, an alias bomb, big, deep and wide Maps, and a
// large file within the limits). Unpacking and validating run in the deploy worker under the
// structural limits and the time budget; the router's event loop, which every request crosses, must
// not notice: the target is the neighbour's max latency under 100 ms in every phase, with no error.
// Then the same tenant attacks at run time (bench/apis/hostile): deep JSON bodies (400), requests
// that would make the host hold 40 MiB under a 32 MiB limit (500), and allocations that abort its
// cell (502, then its quarantine cell, then 503 while paused) from a copy placed in the neighbour's
// own cell, which may cost the neighbour the requests it has in flight at the first abort (a bomb
// that the isolate's limit stops slowly ends in 504 instead).
import { assignCell } from '../dist/cell/process/assign.js';
import { formatApiId } from '../dist/shared/protocol/api-id.js';
import { progress, standalone } from './lib/config.mjs';
import { PUBLIC_HOST_KEY, startAnvil } from './lib/instance.mjs';
import { adminRequest, attacker } from './lib/requests.mjs';
import { HOSTILE_KINDS, tarGz } from './lib/hostile.mjs';
import { openLoop } from './lib/load.mjs';
import { median } from './lib/stats.mjs';
import { checkTarget, fmt, ms } from './lib/targets.mjs';

const RATE = 200; // the neighbour's requests per second
const CELLS = 2;
/** A copy of bench/apis/hostile in the neighbour's cell. */
const BOMB_KEY = Array.from({ length: 100 }, (_, i) => `bomb-${i}`).find(
  (k) =>
    assignCell(formatApiId({ host: 'localhost', env: 'dev', key: k }), CELLS) ===
    assignCell(formatApiId({ host: 'localhost', env: 'dev', key: 'bare' }), CELLS),
);

/** Run-time attacks: each phase has a client process (lib/attacker.mjs) repeat one request as soon as it is answered. */
const RUNTIME_KINDS = [
  {
    name: 'deep JSON bodies: 100 000 levels',
    statuses: [400],
    request: {
      method: 'POST',
      path: '/hostile/deep',
      headers: { 'content-type': 'application/json' },
      deepLevels: 100_000,
    },
  },
  {
    name: 'host memory: 40 MiB stored under a 32 MiB limit',
    statuses: [500],
    request: { method: 'GET', path: '/hostile/hoard' },
  },
  {
    name: "memory bombs (an aborting allocation) from an API in the neighbour's cell",
    statuses: [502, 503, 504],
    sharesCell: true,
    request: { method: 'GET', path: `/${BOMB_KEY}/boom` },
  },
];

export async function run(config) {
  const { seconds, runs } = config;
  const kinds = HOSTILE_KINDS.map((kind) => ({ ...kind, archive: tarGz(kind.files()) }));
  progress(
    `edges: starting Anvil with the neighbour (bare); ${kinds.length} hostile kinds, archives ${kinds.map((k) => `${fmt(k.archive.length / 1024)} KiB`).join(', ')}`,
  );
  const anvil = await startAnvil({
    apis: [{ from: 'bare' }, { from: 'hostile' }, { from: 'hostile', key: BOMB_KEY }],
    args: ['--cells', String(CELLS), '--max-directive-cpu', '5s'],
    readyPath: '/bare/ping',
  });
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
        if (wrong.length > 0)
          throw new Error(
            `${kind.name}: a deploy answered ${wrong[0].status} (expected ${kind.status}): ${wrong[0].body}`,
          );
      }
      r.runtime = [];
      for (const kind of RUNTIME_KINDS) {
        const attacking = attacker({ port: anvil.port, host: 'localhost', headers: {}, ...kind.request });
        const probe = await openLoop(neighbour, { rate: RATE, seconds });
        const answers = await attacking.stop();
        r.runtime.push({ probe, answers });
        const wrong = answers.filter((a) => !kind.statuses.includes(a.status));
        if (wrong.length > 0)
          throw new Error(
            `${kind.name}: answered ${wrong[0].status} (expected ${kind.statuses.join(' or ')}): ${wrong[0].body}`,
          );
      }
      progress(
        `edges run ${i + 1}/${runs}: neighbour alone p99 ${fmt(r.alone.p99, 2)} ms, max ${fmt(r.alone.max, 2)} ms; ${kinds.map((k, j) => `${k.name.split(':')[0]} max ${fmt(r.kinds[j].probe.max, 1)} ms (${r.kinds[j].deploys.length} deploys)`).join('; ')}; ${RUNTIME_KINDS.map((k, j) => `${k.name.split(':')[0]} max ${fmt(r.runtime[j].probe.max, 1)} ms, ${r.runtime[j].probe.errors} errors (${r.runtime[j].answers.length} attacks)`).join('; ')}`,
      );
      perRun.push(r);
    }

    const med = (f) => median(perRun.map(f));
    const worst = (f) => Math.max(...perRun.map(f));
    const errors = (f) => perRun.reduce((sum, r) => sum + f(r).errors, 0);
    const rows = [
      [
        'alone',
        '',
        '',
        ms(med((r) => r.alone.p50)),
        ms(med((r) => r.alone.p99)),
        ms(worst((r) => r.alone.max)),
        String(errors((r) => r.alone)),
      ],
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
    const runtimeRows = RUNTIME_KINDS.map((kind, j) => {
      const answers = perRun.flatMap((r) => r.runtime[j].answers);
      const statuses = [...new Set(answers.map((a) => a.status))].sort().join('/');
      return [
        kind.name,
        `${Math.round(answers.length / perRun.length)} × ${statuses}`,
        ms(median(answers.map((a) => a.ms))),
        ms(med((r) => r.runtime[j].probe.p50)),
        ms(med((r) => r.runtime[j].probe.p99)),
        ms(worst((r) => r.runtime[j].probe.max)),
        String(errors((r) => r.runtime[j].probe)),
      ];
    });
    const shared = RUNTIME_KINDS.filter((k) => !k.sharesCell);
    const worstMax = Math.max(
      ...kinds.map((_, j) => worst((r) => r.kinds[j].probe.max)),
      ...shared.map((k) => worst((r) => r.runtime[RUNTIME_KINDS.indexOf(k)].probe.max)),
    );
    const hostileErrors =
      kinds.reduce((sum, _, j) => sum + errors((r) => r.kinds[j].probe), 0) +
      shared.reduce((sum, k) => sum + errors((r) => r.runtime[RUNTIME_KINDS.indexOf(k)].probe), 0);
    const bombPhase = RUNTIME_KINDS.findIndex((k) => k.sharesCell);
    const bombErrors = perRun.map((r) => r.runtime[bombPhase].probe.errors);
    return {
      id: 'edges',
      title: '8. Edges: a neighbour while another tenant deploys hostile files and attacks at run time',
      tables: [
        {
          caption: `Neighbour = GET /bare/ping at ${RATE} req/s, open loop, ${seconds} s per phase, while one client posts the phase's archive to POST /anvil/api again as soon as it is answered; p50 and p99 the median of ${perRun.length} runs, max the worst of them`,
          columns: [
            'hostile deploy',
            'deploys per phase',
            'deploy answered in (median)',
            'neighbour p50',
            'p99',
            'max',
            'errors',
          ],
          rows,
        },
        {
          caption: `The same neighbour while the tenant attacks at run time (one client repeating the phase's request as soon as it is answered; the memory bombs come from ${BOMB_KEY}, in the neighbour's cell)`,
          columns: [
            'hostile requests',
            'requests per phase',
            'answered in (median)',
            'neighbour p50',
            'p99',
            'max',
            'errors',
          ],
          rows: runtimeRows,
        },
      ],
      targets: [
        checkTarget({
          name: "edges: the neighbour's max latency while hostile deploys, deep bodies and host-memory hoards run (worst phase, worst run)",
          measured: worstMax,
          op: '<',
          limit: 100,
          format: ms,
        }),
        checkTarget({
          name: 'edges: neighbour requests that failed meanwhile',
          measured: hostileErrors,
          op: '<=',
          limit: 0,
          format: (x) => fmt(x),
        }),
      ],
      notes: [
        `The neighbour's max and errors targets cover the hostile deploys, the deep bodies and the host-memory hoard. The memory bombs share the neighbour's cell: the first abort of each run takes the neighbour's requests in flight in it (they fail with 502; per run ${bombErrors.join(', ')} of ${RATE * seconds}); the bomber is then quarantined in a cell of its own (its aborts no longer touch the neighbour), then paused. Requests the neighbour sends while its cell restarts wait for it: that is the max of that phase. The neighbour is never quarantined.`,
        'Each archive is refused with 400 naming the file, the line and the limit (the last kind is deployed: 201), in the deploy worker: the router only receives the bytes, hands them over and records the result.',
        ...(anvil.warnings() ? [`Anvil's log: ${anvil.warnings()}.`] : []),
      ],
      perRun: perRun.map(
        (r, i) =>
          `run ${i + 1}: alone p99 ${fmt(r.alone.p99, 2)} / max ${fmt(r.alone.max, 2)} ms; ${kinds.map((k, j) => `${k.name.split(':')[0]}: p99 ${fmt(r.kinds[j].probe.p99, 2)} / max ${fmt(r.kinds[j].probe.max, 2)} ms, ${r.kinds[j].deploys.length} deploys`).join('; ')}`,
      ),
    };
  } finally {
    await anvil.stop();
  }
}

/** Posts `archive` again and again until stopped; stop() resolves to [{ status, ms, body }]. */
function deployLoop(port, archive) {
  return repeatLoop(() => postArchive(port, archive));
}

/** Runs `attempt` again as soon as it settles, until stopped; stop() resolves to its results. */
function repeatLoop(attempt) {
  let running = true;
  const done = [];
  const loop = (async () => {
    while (running) done.push(await attempt());
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
  return adminRequest(
    port,
    'POST',
    '/anvil/api',
    { 'public-host': 'localhost', 'public-host-key': PUBLIC_HOST_KEY, 'content-type': 'application/gzip' },
    archive,
  ).then((r) => ({ ...r, body: r.body.slice(0, 300) }));
}

standalone(import.meta.url, run);
