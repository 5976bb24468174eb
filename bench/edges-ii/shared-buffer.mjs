// Issue 41, case 5: a victim's download cut through the shared response buffer. An attacker opens
// a connection to a 30 MiB answer every 0.5 s and never reads it, while a client of another API
// downloads 8 MiB at ~600 KB/s (both APIs are copies of bench/apis/big-answer, the default
// --response-buffer of 64 MiB). The victim's download used to be cut at ~4 MB and the cut counted
// against the victim. Now a cut falls on the API most over its share of the buffer: the target is
// the victim's download complete. A neighbour (bench/apis/bare, GET /bare/ping, 200 req/s) is
// measured meanwhile.
import { get, startAnvil } from '../lib/instance.mjs';
import { openLoop } from '../lib/load.mjs';
import { stalledReader, throttledDownload } from '../lib/stalled-readers.mjs';
import { fmt } from '../lib/targets.mjs';

const RATE = 200;
const MiB = 2 ** 20;
const VICTIM_MIB = 8;
const ATTACK_MIB = 30;
const VICTIM_BYTES_PER_S = 600_000;
const ATTACK_EVERY_MS = 500;

export async function phase({ seconds }) {
  const anvil = await startAnvil({
    apis: [{ from: 'bare' }, { from: 'big-answer', key: 'victim' }, { from: 'big-answer', key: 'attacker' }],
    readyPath: '/bare/ping',
  });
  const attackers = [];
  try {
    const neighbour = anvil.url('/bare/ping');
    await openLoop(neighbour, { rate: RATE, seconds: 1, warmup: 0 });
    // Both APIs' threads exist before the attack.
    await get(anvil.port, '/victim/bytes/1');
    await get(anvil.port, '/attacker/bytes/1');
    let attacking = true;
    const attack = (async () => {
      while (attacking) {
        attackers.push(stalledReader(anvil.port, `/attacker/bytes/${ATTACK_MIB}`));
        await new Promise((r) => setTimeout(r, ATTACK_EVERY_MS));
      }
    })();
    await new Promise((r) => setTimeout(r, 1_000)); // the buffer is full of the attacker's answers first
    const probing = openLoop(neighbour, { rate: RATE, seconds, warmup: 0 });
    const victim = await throttledDownload(anvil.port, `/victim/bytes/${VICTIM_MIB}`, VICTIM_BYTES_PER_S);
    const probe = await probing;
    attacking = false;
    await attack;
    const metrics = (await get(anvil.port, '/anvil/metrics', { host: 'admin.localhost' })).body;
    const cuts = (api) =>
      Number(
        new RegExp(
          `^anvil_quota_refusals_total\\{[^}]*api="${api}"[^}]*quota="response_buffer"[^}]*\\} (\\d+)`,
          'm',
        ).exec(metrics)?.[1] ?? 0,
      );
    const complete = victim.status === 200 && victim.received === VICTIM_MIB * MiB;
    return {
      case: 5,
      name: "a victim's download cut through the shared response buffer",
      measured: `victim received ${fmt(victim.received / MiB, 2)} of ${VICTIM_MIB} MiB (${complete ? 'complete' : 'cut'}) in ${fmt(victim.ms / 1000, 1)} s while ${attackers.length} non-reading connections asked for ${ATTACK_MIB} MiB answers`,
      target: "the victim's download completes",
      met: complete,
      neighbourP99Ms: probe.p99,
      neighbourErrors: probe.errors,
      notes: [
        `cuts counted (anvil_quota_refusals_total{quota="response_buffer"}): attacker ${cuts('attacker')}, victim ${cuts('victim')}`,
        `victim at ~${fmt(VICTIM_BYTES_PER_S / 1000, 0)} KB/s: ${fmt(victim.received / 1000 / (victim.ms / 1000), 0)} KB/s; the neighbour GET /bare/ping at ${RATE} req/s for ${seconds} s: p50 ${fmt(probe.p50, 2)} ms, p99 ${fmt(probe.p99, 2)} ms, max ${fmt(probe.max, 1)} ms, ${probe.errors} errors`,
      ],
    };
  } finally {
    for (const a of attackers) a.destroy();
    await anvil.stop();
  }
}
