// The hand-written equivalent of bench/apis/flow in Fastify, doing the same work per request as
// Anvil's full flow (before: PropagateCorrelationId, CheckKey; after: OnError, Log):
// - the correlation id: the request's x-correlation-id when it is 1–128 printable ASCII characters,
//   else the request id; sent back on the response;
// - the key check: `api-key` against the expected key, compared in constant time the way Anvil's
//   CheckKey does (sha256 of both sides, timingSafeEqual); 401 {"error":"Unauthorized"} otherwise;
// - errors rendered as {"error": message} (a generic message for 5xx);
// - one JSON log line per request with the fields of Anvil's Log, written after the response
//   (onResponse hook) to <dir>/logs/YYYY-MM-DD.jsonl through an append stream.
// Endpoints: GET /ping ({"message":"pong"}), GET /custom (the same JSON from a plain function:
// what Anvil runs in its sandbox), GET /item/:id (a read by primary key from a SQLite file with
// better-sqlite3, the table of bench/apis/flow/Assets/db). No response schemas: plain JSON.stringify.
// Usage: node bench/fastify-app.mjs <port> <dir>
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const port = Number(process.argv[2] ?? 18183);
const dir = process.argv[3] ?? '.';
const EXPECTED_KEY = JSON.parse(
  readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'apis/flow/Maps/main.json'), 'utf8'),
).key;
const ACCEPTABLE = /^[\x21-\x7e]{1,128}$/;
const RELEASE = 'r-fastify';

function safeEqual(expected, actual) {
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(actual).digest();
  return timingSafeEqual(a, b) && expected.length === actual.length;
}

mkdirSync(join(dir, 'logs'), { recursive: true });
const log = createWriteStream(join(dir, 'logs', `${new Date().toISOString().slice(0, 10)}.jsonl`), { flags: 'a' });

const db = new Database(join(dir, 'db.sqlite'));
db.pragma('journal_mode = WAL');
db.exec(readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'apis/flow/Assets/db/001-items.sql'), 'utf8'));
const readItem = db.prepare('SELECT id, name, price FROM items WHERE id = ?');

const prefix = randomBytes(3).toString('hex');
let next = 0;
const app = Fastify({ logger: false, genReqId: () => `${prefix}-${(next++).toString(36)}` });

class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.statusCode = status;
  }
}

app.addHook('onRequest', (request, reply, done) => {
  request.receivedAt = performance.now();
  request.entries = ['Correlation'];
  const incoming = request.headers['x-correlation-id'];
  request.correlationId = typeof incoming === 'string' && ACCEPTABLE.test(incoming) ? incoming : request.id;
  reply.header('x-correlation-id', request.correlationId);
  request.entries.push('CheckKey');
  const key = request.headers['api-key'];
  if (!safeEqual(EXPECTED_KEY, typeof key === 'string' ? key : '')) return done(new HttpError(401, 'Unauthorized'));
  done();
});

/** The custom directive's work, as a hand-written app would do it: a plain function call. */
function pong(state) {
  state.body = { message: 'pong' };
}

app.get('/ping', (request) => {
  request.entries.push('Ping');
  return { message: 'pong' };
});
app.get('/custom', (request) => {
  request.entries.push('Pong');
  const state = { body: null };
  pong(state);
  return state.body;
});
app.get('/item/:id', (request) => {
  request.entries.push('Read', 'Reply');
  return readItem.get(request.params.id) ?? null;
});

app.setErrorHandler((error, request, reply) => {
  const status = error.statusCode ?? 500;
  request.errors = [{ label: request.entries.at(-1), status, message: error.message }];
  request.entries.push('OnError');
  reply.status(status).send({ error: status >= 500 ? 'Internal Server Error' : error.message });
});

app.addHook('onResponse', (request, reply, done) => {
  log.write(
    JSON.stringify({
      time: new Date().toISOString(),
      id: request.id,
      verb: request.method,
      path: request.url,
      route: `${request.method.toLowerCase()} ${request.routeOptions.url ?? ''}`,
      status: reply.statusCode,
      durationMs: Math.round((performance.now() - request.receivedAt) * 1000) / 1000,
      correlationId: request.correlationId,
      release: RELEASE,
      entries: [...request.entries, 'Log (after)'],
      errors: request.errors ?? [],
    }) + '\n',
  );
  done();
});

await app.listen({ port, host: '127.0.0.1' });
process.stdout.write(`fastify app on ${port}\n`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
