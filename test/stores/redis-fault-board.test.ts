import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiId } from '../../src/shared/protocol/api-id.js';
import type { FaultDecision, HostFaultDecision } from '../../src/front/scheduling/fault-board.js';
import { RedisFaultBoard } from '../../src/front/scheduling/redis-fault-board.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { waitFor } from '../helpers/wait-for.js';

// The boards of several instances on one Redis (REDIS_URL, else redis://127.0.0.1:6379; each test
// under a prefix of its own, deleted afterwards), and on a Redis of the test's own for the outage.

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const runPrefix = `anvil-test-${randomUUID().slice(0, 12)}`;
const BOMB: ApiId = { host: 'localhost', env: 'dev', key: 'bomb' };
let admin: Redis;
let prefix = '';
let tests = 0;

interface Watched {
  board: RedisFaultBoard;
  adopted: Array<{ api: ApiId; decision: FaultDecision; at: number }>;
  logs: Array<{ level: string; msg: string }>;
}

const boards: RedisFaultBoard[] = [];
function board(url = redisUrl): Watched {
  const logs: Watched['logs'] = [];
  const created = new RedisFaultBoard({ url, prefix, log: (level, msg) => logs.push({ level, msg }) });
  const adopted: Watched['adopted'] = [];
  created.listen((api, decision) => adopted.push({ api, decision, at: Date.now() }));
  boards.push(created);
  return { board: created, adopted, logs };
}

beforeEach(async () => {
  if (admin === undefined) {
    admin = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    await admin.ping();
  }
  prefix = `${runPrefix}-${++tests}:`;
});

afterEach(() => {
  for (const b of boards.splice(0)) b.close();
});

afterAll(async () => {
  if (admin === undefined) return;
  const keys = await admin.keys(`${runPrefix}-*`);
  if (keys.length > 0) await admin.del(...keys);
  await admin.quit();
});

describe('fault decisions shared through Redis', () => {
  it('a pause told by one instance is adopted by the others at once, with what is left of it', async () => {
    const one = board();
    const two = board();
    const three = board();
    // All subscribed before the decision (the poll would find it anyway, a second later).
    await waitFor(async () => (await admin.pubsub('NUMSUB', `${prefix}fault-decisions`))[1] === 3, {
      what: 'the three subscriptions',
    });
    const told = Date.now();
    one.board.tell(BOMB, { strikes: 2, pausedForMs: 2_000 });
    for (const other of [two, three]) {
      const heard = await waitFor(() => other.adopted.find((a) => a.decision.pausedForMs > 0), {
        what: 'the pause to reach another instance',
      });
      expect(heard.api).toEqual(BOMB);
      expect(heard.decision.strikes).toBe(2);
      expect(heard.at - told).toBeLessThan(900);
      expect(heard.decision.pausedForMs).toBeGreaterThan(1_000);
      expect(heard.decision.pausedForMs).toBeLessThanOrEqual(2_000);
    }
  });

  it('keeps the greater strikes and the later pause end of two decisions', async () => {
    const one = board();
    const two = board();
    one.board.tell(BOMB, { strikes: 3, pausedForMs: 4_000 });
    await waitFor(async () => (await admin.hget(`${prefix}fault-decisions`, 'localhost/dev/bomb')) !== null, {
      what: 'the record',
    });
    two.board.tell(BOMB, { strikes: 1, pausedForMs: 1_000 });
    const late = board();
    const learned = await waitFor(() => late.adopted.find((a) => a.api.key === 'bomb'), {
      what: 'the poll of an instance started later',
    });
    expect(learned.decision.strikes).toBe(3);
    expect(learned.decision.pausedForMs).toBeGreaterThan(2_500);
  });

  it('shares decisions about hosts on the same board: at once, merged (suspect once suspect, moved once moved, the later pause end), and with the poll; API listeners never see them', async () => {
    const one = board();
    const two = board();
    const hostsHeard: Array<{ host: unknown; decision: HostFaultDecision }> = [];
    two.board.listenHosts((host, decision) => hostsHeard.push({ host, decision }));
    await waitFor(async () => (await admin.pubsub('NUMSUB', `${prefix}fault-decisions`))[1] === 2, {
      what: 'the two subscriptions',
    });
    const HOST = { host: 'a.example', env: 'dev' };
    one.board.tellHost(HOST, { suspect: true, moved: true, strikes: 1, pausedForMs: 3_000 });
    const heard = await waitFor(() => hostsHeard.find((h) => h.decision.moved), {
      what: 'the host decision on another instance',
    });
    expect(heard.host).toEqual(HOST);
    expect(heard.decision.strikes).toBe(1);
    expect(heard.decision.suspect).toBe(true);
    expect(heard.decision.pausedForMs).toBeGreaterThan(1_500);
    // A later, weaker decision does not undo the move nor the suspicion.
    two.board.tellHost(HOST, { suspect: false, moved: false, strikes: 0, pausedForMs: 0 });
    const late = board();
    const lateHosts: HostFaultDecision[] = [];
    late.board.listenHosts((_host, decision) => lateHosts.push(decision));
    const learned = await waitFor(() => lateHosts[0], { what: 'the poll of an instance started later' });
    expect(learned).toMatchObject({ suspect: true, moved: true, strikes: 1 });
    expect([...one.adopted, ...two.adopted, ...late.adopted]).toEqual([]);
  });

  it('an instance started later learns an earlier quarantine from the poll', async () => {
    const one = board();
    one.board.tell(BOMB, { strikes: 0, pausedForMs: 0 });
    await waitFor(async () => (await admin.hget(`${prefix}fault-decisions`, 'localhost/dev/bomb')) !== null, {
      what: 'the record',
    });
    const later = board();
    const learned = await waitFor(() => later.adopted[0], { what: 'the poll' });
    expect(learned).toMatchObject({ api: BOMB, decision: { strikes: 0, pausedForMs: 0 } });
  });

  it('ignores records it cannot read, and forgets them', async () => {
    await admin.hset(
      `${prefix}fault-decisions`,
      'localhost/dev/bomb',
      'not json',
      'nonsense',
      '{"strikes":1,"pausedUntil":0,"at":0}',
    );
    const one = board();
    await waitFor(async () => (await admin.hlen(`${prefix}fault-decisions`)) === 0, {
      what: 'the unreadable and the old records to go',
    });
    expect(one.adopted).toEqual([]);
  });
});

describe('while Redis cannot be reached', () => {
  let redis: PrivateRedis;
  afterAll(async () => redis?.kill());

  it('nothing fails; a decision taken meanwhile is told once Redis is back, with what is left of its pause', async () => {
    redis = await PrivateRedis.start();
    const one = board(redis.url);
    const two = board(redis.url);
    await redis.kill();
    expect(() => one.board.tell(BOMB, { strikes: 4, pausedForMs: 8_000 })).not.toThrow();
    await waitFor(
      () => one.logs.some((l) => l.level === 'warn' && /not shared while Redis cannot be reached/.test(l.msg)),
      { what: 'the outage to be logged' },
    );
    expect(two.adopted).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await redis.resume();
    const heard = await waitFor(() => two.adopted.find((a) => a.decision.strikes === 4), {
      what: 'the decision after the outage',
      timeoutMs: 15_000,
    });
    expect(heard.decision.pausedForMs).toBeLessThan(7_100);
    expect(heard.decision.pausedForMs).toBeGreaterThan(0);
    await waitFor(() => one.logs.some((l) => l.msg === 'fault decisions are shared again'), {
      what: 'the recovery to be logged',
    });
  }, 30_000);
});
