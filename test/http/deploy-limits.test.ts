import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backgroundLoad } from '../helpers/background-load.js';
import {
  aliasBomb,
  bigJson,
  deepJson,
  deepNesting,
  manyAliases,
  manyRoutes,
  wideJson,
} from '../helpers/hostile-files.js';
import { startInstance, type Reply, type TestInstance } from '../helpers/instance.js';
import { tarGz } from '../helpers/tarball.js';

// Hostile deploys (issue 21): unpacking and validating run in the deploy worker, under structural
// limits and a time budget. Each hostile kind is refused with 400 naming the file, the line and the
// limit, while a neighbour API keeps answering.

const PING = 'key: ping\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n';
const valid = (key: string) => `key: ${key}\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n`;

function deploy(on: TestInstance, files: Record<string, string>): Promise<Reply> {
  return on.admin('/anvil/api', {
    method: 'POST',
    body: tarGz(files),
    headers: { 'content-type': 'application/gzip' },
  });
}

/** Deploys `files` while two clients call the neighbour back to back; every call must answer 200. */
async function deployBesideNeighbour(on: TestInstance, files: Record<string, string>): Promise<Reply> {
  const neighbour = backgroundLoad(on, '/ping/ping', 2);
  let reply: Reply;
  try {
    reply = await deploy(on, files);
  } finally {
    await neighbour.stop();
  }
  expect(neighbour.replies.length).toBeGreaterThan(0);
  expect(new Set(neighbour.statuses())).toEqual(new Set([200]));
  return reply;
}

describe('hostile deploys are refused, naming the file, the line and the limit', () => {
  let anvil: TestInstance;
  beforeAll(async () => {
    // These cases are about the structural limits, not the time budget (below): a 20,000-route file
    // takes seconds to tokenise on a loaded machine, so the budget is raised out of their way.
    anvil = await startInstance({ apis: { ping: { 'api.yaml': PING } }, args: ['--deploy-timeout', '60s'] });
  });
  afterAll(async () => anvil?.dispose());

  const cases: Array<[kind: string, files: () => Record<string, string>, error: string]> = [
    [
      'many keys in one map',
      () => ({ 'api.yaml': manyRoutes('many-keys', 20_000).text }),
      'api.yaml:10003:3 more than 10000 keys in one map: the limit is 10000 keys per map',
    ],
    [
      'deep nesting',
      () => ({ 'api.yaml': deepNesting('deep', 400_000).text }),
      'api.yaml:4:106 maps and lists nested deeper than 64 levels: the limit is 64',
    ],
    [
      'an alias bomb',
      () => ({ 'api.yaml': aliasBomb('bomb').text }),
      'api.yaml:11:44 [get /x › Reply] alias *d expands the file to more than 100000 YAML nodes: the limit is 100000',
    ],
    [
      'too many aliases',
      () => ({ 'api.yaml': manyAliases('aliases', 1000).text }),
      'api.yaml:108:11 more than 100 aliases (*name) in the file: the limit is 100',
    ],
    [
      'Maps over 4 MiB',
      () => ({ 'api.yaml': valid('big-maps'), 'Maps/main.json': bigJson(5 * 1024 * 1024) }),
      'Maps/main.json:1:1 with Maps/main.json, the Maps files come to more than 4 MiB: the limit is 4 MiB of Maps per release',
    ],
    [
      'deep Maps',
      () => ({ 'api.yaml': valid('deep-maps'), 'Maps/main.json': deepJson(500_000) }),
      'Maps/main.json:1:321 objects and arrays nested deeper than 64 levels: the limit is 64',
    ],
    [
      'Maps with many keys',
      () => ({ 'api.yaml': valid('wide-maps'), 'Maps/main.json': wideJson(50_000) }),
      'Maps/main.json:10002:11 more than 10000 keys in one object: the limit is 10000 keys per object',
    ],
  ];

  it.each(cases)('%s', async (_kind, files, error) => {
    const reply = await deployBesideNeighbour(anvil, files());
    expect(reply.status).toBe(400);
    const body = reply.json();
    expect(body).toEqual({ error, code: 'ANVIL_ERR_DEPLOY_REFUSED', errors: [error] });
  });

  it('validates a large file within the limits (10000 routes) and serves it, the neighbour answering meanwhile', async () => {
    const reply = await deployBesideNeighbour(anvil, { 'api.yaml': manyRoutes('wide-but-fine', 10_000).text });
    expect(reply.status).toBe(201);
    expect((await anvil.admin('/wide-but-fine/r9999')).status).toBe(200);
  });

  it('lists at most 100 errors, then counts the rest', async () => {
    const routes = manyRoutes('many-errors', 300).text.replaceAll('directive: Ping', 'directive: Pnig');
    const { errors } = (await deploy(anvil, { 'api.yaml': routes })).json();
    expect(errors).toHaveLength(101);
    expect(errors[0]).toBe('api.yaml:3:30 [get /r0 › P] unknown directive "Pnig" (did you mean "Ping"?)');
    expect(errors[100]).toBe('... and 200 more errors');
  });
});

describe('the deploy time budget (--deploy-timeout)', () => {
  let anvil: TestInstance;
  beforeAll(async () => {
    anvil = await startInstance({ args: ['--deploy-timeout', '600ms'] });
  });
  afterAll(async () => anvil?.dispose());

  it('refuses a deploy that takes longer with 400 "validation took too long", and the next deploy works', async () => {
    // Within every limit, but slow: 400 custom directives to compile and 9000 routes to check (~1.5 s
    // here); the budget leaves a quick deploy on a freshly started worker room on a loaded machine.
    const files: Record<string, string> = { 'api.yaml': manyRoutes('slow', 9000).text };
    for (let i = 0; i < 400; i++)
      files[`Directives/D${i}.ts`] = `const d${i}: number = ${i};\nexport default () => d${i};\n`;
    const reply = await deploy(anvil, files);
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({
      error: 'validation took too long (600 ms)',
      code: 'ANVIL_ERR_DEPLOY_REFUSED',
      errors: ['validation took too long (600 ms)'],
    });
    expect((await anvil.admin('/anvil/api/slow')).status).toBe(404);

    const next = await deploy(anvil, { 'api.yaml': valid('quick') });
    expect(next.status).toBe(201);
    expect((await anvil.admin('/quick/ping')).json()).toEqual({ message: 'pong' });
  });
});
