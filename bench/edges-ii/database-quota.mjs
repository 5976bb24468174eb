// Issue 41, case 3: one API fills its SQLite database with built-in directives only. The attacker
// (bench/apis/db-hog) repeats a DatabaseQuery inserting 200 × 1 MiB of random bytes as soon as it is
// answered, under the default quota (--max-database-bytes 256 MiB: the file holds at most 128 MiB in
// pages, the log of one transaction as much again, and between writes a sixteenth of the quota).
// Meanwhile the database file and its write-ahead log are measured every 10 ms, and a neighbour API
// (bench/apis/bare, GET /bare/ping) at 200 requests/s, open loop.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startAnvil } from '../lib/instance.mjs';
import { openLoop } from '../lib/load.mjs';
import { attacker } from '../lib/requests.mjs';

const MIB = 1024 * 1024;
const QUOTA = 256 * MIB;
/** The documented slack: the log's between writes (a sixteenth, at most 8 MiB) and its frame headers (24 bytes a 4 KiB page, and 32). */
const ALLOWED = QUOTA + Math.min(8 * MIB, QUOTA / 16) + (QUOTA / 2 / 4096) * 24 + 32;
const RATE = 200;

export async function phase({ seconds }) {
  const anvil = await startAnvil({
    apis: [{ from: 'bare' }, { from: 'db-hog' }],
    args: ['--cells', '2'],
    readyPath: '/bare/ping',
  });
  try {
    const neighbour = anvil.url('/bare/ping');
    await openLoop(neighbour, { rate: RATE, seconds: 1, warmup: 0 });
    const alone = await openLoop(neighbour, { rate: RATE, seconds: Math.min(seconds, 5) });
    let files = null;
    let peak = 0;
    let peakFile = 0;
    const sampler = setInterval(() => {
      files ??= databaseFiles(anvil.dataDir, 'db-hog');
      if (files === null) return;
      const file = size(files.file);
      const total = file + size(files.log);
      if (total > peak) peak = total;
      if (file > peakFile) peakFile = file;
    }, 10);
    const attacking = attacker({
      port: anvil.port,
      host: 'localhost',
      headers: {},
      method: 'POST',
      path: '/db-hog/hog',
    });
    const probe = await openLoop(neighbour, { rate: RATE, seconds });
    const answers = await attacking.stop();
    clearInterval(sampler);
    files ??= databaseFiles(anvil.dataDir, 'db-hog');
    const after = files === null ? 0 : size(files.file) + size(files.log);
    const statuses = count(answers.map((a) => a.status));
    const met = peak <= ALLOWED && answers.length > 0 && answers.every((a) => a.status === 507) && probe.errors === 0;
    return {
      case: 3,
      name: 'database disk quota',
      measured: `db + WAL peak ${mib(peak)} MiB (file ${mib(peakFile)} MiB), ${mib(after)} MiB after; ${answers.length} attacks: ${Object.entries(
        statuses,
      )
        .map(([s, n]) => `${n} × ${s}`)
        .join(', ')}`,
      target: `≤ quota ${mib(QUOTA)} MiB + slack = ${mib(ALLOWED)} MiB, every attack 507`,
      met,
      neighbourP99Ms: round(probe.p99),
      neighbourErrors: probe.errors,
      notes: [
        'attacker: POST /db-hog/hog (DatabaseQuery: insert 200 × randomblob(1 MiB)) repeated as soon as answered, default --max-database-bytes 256 MiB',
        `neighbour: GET /bare/ping at ${RATE}/s open loop, p50 ${round(probe.p50)} ms, max ${round(probe.max)} ms (alone before: p99 ${round(alone.p99)} ms, max ${round(alone.max)} ms)`,
        'db + WAL sampled every 10 ms (db.sqlite and db.sqlite-wal of the API)',
      ],
    };
  } finally {
    await anvil.stop();
  }
}

/** The API's database file and its log (the first data folder holding the key), or null before it is made. */
function databaseFiles(dataDir, key) {
  for (const host of readdirSync(dataDir)) {
    let envs = [];
    try {
      envs = readdirSync(join(dataDir, host));
    } catch {
      continue;
    }
    for (const env of envs) {
      const file = join(dataDir, host, env, key, 'db.sqlite');
      try {
        statSync(join(dataDir, host, env, key));
        return { file, log: `${file}-wal` };
      } catch {
        // not this one
      }
    }
  }
  return null;
}

function size(path) {
  return statSync(path, { throwIfNoEntry: false })?.size ?? 0;
}

const count = (values) => values.reduce((acc, v) => ((acc[v] = (acc[v] ?? 0) + 1), acc), {});
const mib = (bytes) => (bytes / MIB).toFixed(1);
const round = (value) => Math.round(value * 100) / 100;
