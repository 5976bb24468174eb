// Issue 41, case 7: deploys starving across tenants. Host A (the default public host) posts 30
// deploys of a 9 000-endpoint api.yaml at once; once the first is answered (the other 29 waiting),
// host B (other.localhost, added with the CLI) posts one small deploy: the time it takes is the
// figure (33 s before: B's came after all of A's). The deploy worker takes waiting deploys in turn
// between hosts. --max-queued-deploys is raised to 30 so that all of A's wait (with the default 8,
// 22 of them are refused with 429 at once). The neighbour (bench/apis/bare) is measured at 200 req/s
// meanwhile. A's deploys still waiting when B's is answered and the probe is over are cut by the stop.
import { anvilCli, PUBLIC_HOST_KEY, startAnvil } from '../lib/instance.mjs';
import { manyRoutes, tarGz } from '../lib/hostile.mjs';
import { openLoop } from '../lib/load.mjs';
import { adminRequest } from '../lib/requests.mjs';

const RATE = 200;
const BIG_DEPLOYS = 30;
const ROUTES = 9000;
const TARGET_MS = 3000;
const HOST_B = { 'public-host': 'other.localhost', 'public-host-key': 'other-bench-host-key-0123456789' };
const HOST_A = { 'public-host': 'localhost', 'public-host-key': PUBLIC_HOST_KEY };

export async function phase({ seconds }) {
  const anvil = await startAnvil({
    apis: [{ from: 'bare' }],
    args: ['--max-queued-deploys', String(BIG_DEPLOYS)],
    readyPath: '/bare/ping',
    beforeStart: (dataDir) =>
      anvilCli([
        'hosts',
        'add-public',
        HOST_B['public-host'],
        '--env',
        'dev',
        '--key',
        HOST_B['public-host-key'],
        '--data',
        dataDir,
      ]),
  });
  try {
    await openLoop(anvil.url('/bare/ping'), { rate: RATE, seconds: 1, warmup: 0 });
    const archives = Array.from({ length: BIG_DEPLOYS }, (_, i) =>
      tarGz({ 'api.yaml': manyRoutes(`big-${i}`, ROUTES) }),
    );
    const small = tarGz({ 'api.yaml': 'key: neighbour\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n' });

    const probing = openLoop(anvil.url('/bare/ping'), { rate: RATE, seconds });
    const aAnswers = [];
    let firstAnswered;
    const first = new Promise((resolve) => (firstAnswered = resolve));
    const flood = archives.map((archive) =>
      adminRequest(anvil.port, 'POST', '/anvil/api', { ...HOST_A, 'content-type': 'application/gzip' }, archive).then(
        (reply) => {
          aAnswers.push({ status: reply.status, at: performance.now() });
          firstAnswered();
        },
      ),
    );
    await first;
    const t0 = performance.now();
    const b = await adminRequest(
      anvil.port,
      'POST',
      '/anvil/api',
      { ...HOST_B, 'content-type': 'application/gzip' },
      small,
    );
    const bMs = performance.now() - t0;
    if (b.status !== 201) throw new Error(`host B's deploy answered ${b.status}: ${b.body}`);
    const aBeforeB = aAnswers.filter((a) => a.at <= t0 + bMs).length;
    const probe = await probing;
    const aDone = aAnswers.length;
    const wrong = aAnswers.filter((a) => a.status !== 201);
    if (wrong.length > 0) throw new Error(`a deploy of host A answered ${wrong[0].status}`);
    void Promise.allSettled(flood);
    return {
      case: 7,
      name: 'deploys starve across tenants',
      measured: `host B's deploy ${Math.round(bMs)} ms with ${BIG_DEPLOYS - aBeforeB} of host A's ${ROUTES}-route deploys still waiting or running (${aBeforeB} of A's answered before B's)`,
      target: `< ${TARGET_MS} ms`,
      met: bMs < TARGET_MS,
      neighbourP99Ms: probe.p99,
      neighbourErrors: probe.errors,
      notes: [
        `host A posted ${BIG_DEPLOYS} deploys at once (${Math.round(archives[0].length / 1024)} KiB archives); B posted once A's first was answered; ${aDone} of A's answered by the end of the ${seconds} s probe`,
        "--max-queued-deploys 30 so that all of A's wait; with the default 8, A's 9th and later are refused at once with 429 ANVIL_ERR_DEPLOY_QUEUE_FULL",
      ],
    };
  } finally {
    await anvil.stop();
  }
}
