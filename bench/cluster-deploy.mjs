// Issue 23: deploy-to-live across instances in cluster mode. Three instances share a fresh Postgres
// database (DATABASE_URL) and Redis; 50 deploys of a small API go round robin through them, each
// with a new variant. For each deploy: from sending the archive until every instance serves the new
// variant (deploy-to-live), and from the 201 until the last OTHER instance serves it (propagation).
// Prints p50/p99/max of both, and from the 201 until the others' registries show the release. `PG_ADMIN_URL` (default postgres://postgres@127.0.0.1:5432/postgres)
// creates and drops the database; `REDIS_URL` (default redis://127.0.0.1:6379). A section of
// `npm run bench` (cluster); alone:
//   node bench/cluster-deploy.mjs            (BENCH_CLUSTER_DEPLOYS, default 50)
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { create } from 'tar';
import { progress, standalone } from './lib/config.mjs';
import { PUBLIC_HOST_KEY, startAnvil } from './lib/instance.mjs';
import { summarize } from './lib/stats.mjs';
import { checkTarget, fmt } from './lib/targets.mjs';

const DEPLOYS = Number(process.env.BENCH_CLUSTER_DEPLOYS ?? 50);
const PG_ADMIN_URL = process.env.PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const ADMIN = { host: 'admin.localhost', 'public-host': 'localhost', 'public-host-key': PUBLIC_HOST_KEY };

function call(port, method, path, body) {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: { ...ADMIN, ...(body ? { 'content-type': 'application/gzip', 'content-length': body.length } : {}) },
      },
      (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (c) => (text += c))
          .on('end', () => resolve({ status: res.statusCode, text }));
      },
    );
    req.on('error', reject).end(body);
  });
}

async function archive(variant) {
  const dir = mkdtempSync(join(tmpdir(), 'anvil-cluster-bench-'));
  writeFileSync(
    join(dir, 'api.yaml'),
    `key: shop\nendpoints:\n  get /variant:\n    Reply: { directive: ModifyMessage, body: { variant: v${variant} } }\n`,
  );
  const chunks = [];
  for await (const chunk of create({ gzip: true, cwd: dir, portable: true }, ['api.yaml'])) chunks.push(chunk);
  rmSync(dir, { recursive: true, force: true });
  return Buffer.concat(chunks);
}

async function servedAt(port, variant) {
  for (;;) {
    const reply = await call(port, 'GET', '/shop/variant').catch(() => null);
    if (reply?.status === 200 && reply.text.includes(`"v${variant}"`)) return performance.now();
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function recordedAt(port, release) {
  for (;;) {
    const reply = await call(port, 'GET', '/anvil/api/shop').catch(() => null);
    if (reply?.status === 200 && JSON.parse(reply.text).release === release) return performance.now();
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function admin(sql) {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function run() {
  const dbName = `anvil_bench_${randomBytes(6).toString('hex')}`;
  await admin(`CREATE DATABASE ${dbName}`);
  const instances = [];
  try {
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${dbName}`;
    const env = { DATABASE_URL: url.toString(), REDIS_URL, ANVIL_REDIS_PREFIX: `anvil-bench-${dbName}:` };
    progress(`cluster: three instances on one control plane (…/${dbName}), ${DEPLOYS} deploys round robin`);
    instances.push(...(await Promise.all([0, 1, 2].map(() => startAnvil({ apis: [], env, args: ['--cells', '1'] })))));
    const toLive = [];
    const propagation = [];
    const recorded = [];
    for (let i = 0; i < DEPLOYS; i++) {
      const through = instances[i % 3];
      const body = await archive(i);
      const sent = performance.now();
      const reply = await call(through.port, 'POST', '/anvil/api', body);
      if (reply.status !== 201) throw new Error(`deploy ${i} through :${through.port}: ${reply.status} ${reply.text}`);
      const answered = performance.now();
      const { release } = JSON.parse(reply.text);
      const [live, inReplica] = await Promise.all([
        Promise.all(instances.map((instance) => servedAt(instance.port, i))),
        Promise.all(
          instances.filter((instance) => instance !== through).map((instance) => recordedAt(instance.port, release)),
        ),
      ]);
      recorded.push(Math.max(...inReplica) - answered);
      toLive.push(Math.max(...live) - sent);
      propagation.push(Math.max(...live.filter((_, n) => instances[n] !== through)) - answered);
    }
    const live = summarize(toLive);
    const others = summarize(propagation);
    const row = (name, s) => [name, `${fmt(s.p50)} ms`, `${fmt(s.p99)} ms`, `${fmt(s.max)} ms`];
    const warnings = instances.map((instance) => instance.warnings()).filter(Boolean);
    return {
      id: 'cluster',
      title: '10. Cluster: deploy-to-live across three instances (issue 23)',
      tables: [
        {
          caption: `${DEPLOYS} deploys of a small API, round robin through three instances sharing a Postgres control plane (a fresh database) and Redis`,
          columns: ['span', 'p50', 'p99', 'max'],
          rows: [
            row('POST sent → served by all 3 instances', live),
            row('201 answered → served by the 2 others', others),
            row("201 answered → in the 2 others' registries", summarize(recorded)),
          ],
        },
      ],
      targets: [
        checkTarget({
          name: 'cluster: a deploy through one instance served by the others (p99 of the 201 → served span)',
          measured: others.p99,
          op: '<',
          limit: 1500,
          format: (x) => `${fmt(x)} ms`,
        }),
      ],
      notes: [
        'Served: each instance polled GET /shop/variant every 5 ms until it answered the new variant (the first request of a release starts its thread). The others learn of a release by Postgres NOTIFY, with a version poll as the fallback.',
        ...(warnings.length > 0 ? [`The instances warned: ${warnings.join('; ')}`] : []),
      ],
      perRun: [
        `201 answered → served by the 2 others, each deploy in turn: ${propagation.map((ms) => Math.round(ms)).join(', ')} ms`,
      ],
    };
  } finally {
    await Promise.all(instances.map((instance) => instance.stop()));
    await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  }
}

standalone(import.meta.url, run);
