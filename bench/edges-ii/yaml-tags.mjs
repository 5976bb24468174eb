// Issue 41, case 9: `endpoints: !!timestamp 2001-12-14` deployed as an API with no endpoints (the
// yaml library makes a Date of it even with the core schema). Now a tag outside the core schema is
// refused at its line and column. Measured: the tenant's deploys of it, posted again as soon as
// answered, their statuses and first error; a neighbour at 200 req/s meanwhile.
import { tarGz } from '../lib/hostile.mjs';
import { PUBLIC_HOST_KEY, startAnvil } from '../lib/instance.mjs';
import { openLoop } from '../lib/load.mjs';
import { adminRequest } from '../lib/requests.mjs';
import { fmt } from '../lib/targets.mjs';

const RATE = 200;
const ARCHIVE = tarGz({ 'api.yaml': 'key: tagged\nendpoints: !!timestamp 2001-12-14\n' });

export async function phase({ seconds }) {
  const anvil = await startAnvil({ apis: [{ from: 'bare' }], readyPath: '/bare/ping' });
  try {
    const neighbour = anvil.url('/bare/ping');
    await openLoop(neighbour, { rate: RATE, seconds: 1, warmup: 0 });
    const probing = openLoop(neighbour, { rate: RATE, seconds, warmup: 0 });
    const answers = [];
    const end = performance.now() + seconds * 1000;
    while (performance.now() < end)
      answers.push(
        await adminRequest(
          anvil.port,
          'POST',
          '/anvil/api',
          { 'public-host': 'localhost', 'public-host-key': PUBLIC_HOST_KEY, 'content-type': 'application/gzip' },
          ARCHIVE,
        ),
      );
    const probe = await probing;
    const statuses = [...new Set(answers.map((a) => a.status))].sort().join('/');
    const positioned = answers.filter(
      (a) => a.status === 400 && /api\.yaml:2:\d+ YAML tag !!timestamp/.test(a.body),
    ).length;
    return {
      case: 9,
      name: '`endpoints: !!timestamp 2001-12-14` deploys',
      measured: `${answers.length} deploys answered ${statuses}, ${positioned} of them naming api.yaml:2 and the tag`,
      target: 'every one 400 with the position',
      met: answers.length > 0 && positioned === answers.length,
      neighbourP99Ms: probe.p99,
      neighbourErrors: probe.errors,
      notes: [
        `the answer: ${answers[0]?.body.slice(0, 200)}`,
        `neighbour GET /bare/ping at ${RATE} req/s for ${seconds} s meanwhile: p50 ${fmt(probe.p50, 2)} ms, p99 ${fmt(probe.p99, 2)} ms, ${probe.errors} errors`,
      ],
    };
  } finally {
    await anvil.stop();
  }
}
