/**
 * The fault board (front/scheduling/fault-board.ts) on Redis: every instance on the same Redis and prefix
 * shares its quarantine and pause decisions.
 *
 * - A hash `<prefix>fault-decisions`, API id → `{strikes, pausedUntil, at}` on Redis's clock (TIME),
 *   and host id (`formatEnvId`: `<host>/<env>`, one part fewer, so the two never meet) →
 *   `{strikes, pausedUntil, suspect, moved, at}` (front/scheduling/host-faults.ts),
 *   so instances whose clocks differ still pause an API for the same remaining time. A decision is
 *   merged in by one Lua script (the greater strikes, the later pause end, suspect once suspect,
 *   moved once moved) that also PUBLISHes it on
 *   the channel of the same name, with the pause left, for prompt propagation (milliseconds).
 * - Every instance also reads the whole hash every POLL_MS (one script: the records with the pause
 *   left of each), the fallback for a notice missed while its subscriber was reconnecting, and how
 *   an instance started later learns what the others decided. A record is forgotten once its pause
 *   is over and the API's (or host's) last decision is KEEP_MS old. An instance that adopted it
 *   keeps its quarantine, suspicion and move for good, as the one that decided does; only an
 *   instance started after that learns nothing of it, and decides alone again (a host's next abort
 *   there makes it suspect there).
 * - Redis unreachable: nothing fails. A decision that cannot be told is kept and told again at the
 *   next poll (with what is left of its pause); the instance meanwhile decides alone, as without
 *   Redis. ioredis reconnects and resubscribes by itself. Logged once per outage.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { formatApiId, formatEnvId, parseApiId, type ApiId } from '../../shared/protocol/api-id.js';
import type { FaultBoard, FaultDecision, HostFaultDecision } from './fault-board.js';

type HostId = Pick<ApiId, 'host' | 'env'>;

/** How often each instance reads every decision (the fallback for a missed notice). */
const POLL_MS = 1_000;
/** A decision is remembered this long after the API's last one (once its pause is over). */
const KEEP_MS = 60 * 60_000;
const COMMAND_TIMEOUT_MS = 5_000;

const NOW_LUA = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
`;

// KEYS: the hash. ARGV: API or host id, strikes, pause ms (0: none), channel, KEEP_MS, the teller's
// id, suspect (hosts; 1 or 0), moved (hosts; 1 or 0).
const RECORD_LUA = `${NOW_LUA}
local strikes = tonumber(ARGV[2])
local pausedUntil = 0
local suspect = tonumber(ARGV[7]) or 0
local moved = tonumber(ARGV[8]) or 0
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  local ok, record = pcall(cjson.decode, old)
  if ok and type(record) == 'table' then
    strikes = math.max(strikes, tonumber(record.strikes) or 0)
    pausedUntil = tonumber(record.pausedUntil) or 0
    suspect = math.max(suspect, tonumber(record.suspect) or 0)
    moved = math.max(moved, tonumber(record.moved) or 0)
  end
end
local pause = tonumber(ARGV[3])
if pause > 0 then pausedUntil = math.max(pausedUntil, now + pause) end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode({strikes = strikes, pausedUntil = pausedUntil, suspect = suspect, moved = moved, at = now}))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[5]))
redis.call('PUBLISH', ARGV[4], cjson.encode({id = ARGV[1], strikes = strikes, pausedForMs = math.max(0, pausedUntil - now), suspect = suspect, moved = moved, from = ARGV[6]}))
return 1
`;

// KEYS: the hash. ARGV: KEEP_MS. Returns id, strikes, pause left, suspect, moved, … for every record kept.
const READ_LUA = `${NOW_LUA}
local out = {}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local ok, record = pcall(cjson.decode, all[i + 1])
  local pausedUntil = ok and type(record) == 'table' and tonumber(record.pausedUntil) or 0
  if not ok or type(record) ~= 'table' or ((tonumber(record.at) or 0) + tonumber(ARGV[1]) < now and pausedUntil <= now) then
    redis.call('HDEL', KEYS[1], all[i])
  else
    table.insert(out, all[i])
    table.insert(out, tonumber(record.strikes) or 0)
    table.insert(out, math.max(0, pausedUntil - now))
    table.insert(out, tonumber(record.suspect) or 0)
    table.insert(out, tonumber(record.moved) or 0)
  end
end
return out
`;

type ScriptedRedis = Redis & {
  anvilRecordFault(
    hash: string,
    id: string,
    strikes: string,
    pauseMs: string,
    channel: string,
    keepMs: string,
    from: string,
    suspect: string,
    moved: string,
  ): Promise<number>;
  anvilReadFaults(hash: string, keepMs: string): Promise<Array<string | number>>;
};

export interface RedisFaultBoardOptions {
  url: string;
  /** The installation's key prefix (ANVIL_REDIS_PREFIX, `anvil:` by default). */
  prefix: string;
  log: (level: 'info' | 'warn', msg: string, fields: Record<string, unknown>) => void;
}

export class RedisFaultBoard implements FaultBoard {
  private readonly self = randomUUID();
  private readonly key: string;
  private readonly redis: ScriptedRedis;
  private readonly subscriber: Redis;
  private readonly poller: NodeJS.Timeout;
  /** Decisions not told yet (Redis unreachable), by API or host id: the newest of each, and when it was taken. */
  private readonly untold = new Map<string, { decision: FaultDecision & Partial<HostFaultDecision>; at: number }>();
  private adopt: (api: ApiId, decision: FaultDecision) => void = () => {};
  private adoptHost: (host: HostId, decision: HostFaultDecision) => void = () => {};
  private outage: string | null = null;
  private polling = false;
  private closed = false;

  /** Connects in the background; never throws for an unreachable Redis. */
  constructor(private readonly options: RedisFaultBoardOptions) {
    this.key = `${options.prefix}fault-decisions`;
    const connection = {
      maxRetriesPerRequest: 1,
      connectTimeout: COMMAND_TIMEOUT_MS,
      commandTimeout: COMMAND_TIMEOUT_MS,
      autoResendUnfulfilledCommands: false,
    };
    this.redis = new Redis(options.url, connection) as ScriptedRedis;
    this.redis.defineCommand('anvilRecordFault', { numberOfKeys: 1, lua: RECORD_LUA });
    this.redis.defineCommand('anvilReadFaults', { numberOfKeys: 1, lua: READ_LUA });
    // A subscribed connection runs no other command; it resubscribes by itself after a reconnect.
    this.subscriber = new Redis(options.url, { connectTimeout: COMMAND_TIMEOUT_MS });
    for (const client of [this.redis, this.subscriber]) client.on('error', (error: Error) => this.failed(error));
    this.subscriber.on('message', (_channel: string, message: string) => this.heard(message));
    this.subscriber.subscribe(this.key).catch((error: unknown) => this.failed(error));
    this.poller = setInterval(() => void this.poll(), POLL_MS);
    this.poller.unref();
    void this.poll();
  }

  tell(api: ApiId, decision: FaultDecision): void {
    this.untold.set(formatApiId(api), { decision, at: Date.now() });
    void this.flush();
  }

  listen(adopt: (api: ApiId, decision: FaultDecision) => void): void {
    this.adopt = adopt;
  }

  tellHost(host: HostId, decision: HostFaultDecision): void {
    this.untold.set(formatEnvId(host), { decision, at: Date.now() });
    void this.flush();
  }

  listenHosts(adopt: (host: HostId, decision: HostFaultDecision) => void): void {
    this.adoptHost = adopt;
  }

  close(): void {
    this.closed = true;
    clearInterval(this.poller);
    this.redis.disconnect();
    this.subscriber.disconnect();
  }

  /** Tells what is not told yet; what fails stays for the next poll. */
  private async flush(): Promise<void> {
    for (const [id, entry] of [...this.untold]) {
      const left = (ms: number | undefined) =>
        ms !== undefined && ms > 0 ? Math.max(1, ms - (Date.now() - entry.at)) : 0;
      const { strikes, pausedForMs, suspect, moved } = entry.decision;
      try {
        await this.redis.anvilRecordFault(
          this.key,
          id,
          String(strikes),
          String(left(pausedForMs)),
          this.key,
          String(KEEP_MS),
          this.self,
          suspect === true ? '1' : '0',
          moved === true ? '1' : '0',
        );
      } catch (error) {
        this.failed(error);
        return;
      }
      if (this.untold.get(id) === entry) this.untold.delete(id);
      this.reachable();
    }
  }

  /** One poll at a time: while Redis hangs, a command waits up to COMMAND_TIMEOUT_MS. */
  private async poll(): Promise<void> {
    if (this.closed || this.polling) return;
    this.polling = true;
    let records: Array<string | number>;
    try {
      await this.flush();
      records = await this.redis.anvilReadFaults(this.key, String(KEEP_MS));
    } catch (error) {
      this.failed(error);
      return;
    } finally {
      this.polling = false;
    }
    this.reachable();
    for (let i = 0; i + 4 < records.length; i += 5) {
      this.offer(
        String(records[i]),
        Number(records[i + 1]),
        Number(records[i + 2]),
        Number(records[i + 3]) > 0,
        Number(records[i + 4]) > 0,
      );
    }
  }

  /** A notice on the channel (another instance's decision, or ours coming back: skipped). */
  private heard(message: string): void {
    let notice: unknown;
    try {
      notice = JSON.parse(message);
    } catch {
      return;
    }
    if (typeof notice !== 'object' || notice === null) return;
    const { id, strikes, pausedForMs, suspect, moved, from } = notice as Record<string, unknown>;
    if (from === this.self || typeof id !== 'string') return;
    this.offer(id, Number(strikes), Number(pausedForMs), Number(suspect ?? 0) > 0, Number(moved ?? 0) > 0);
  }

  private offer(id: string, strikes: number, pausedForMs: number, suspect: boolean, moved: boolean): void {
    if (
      this.closed ||
      !Number.isSafeInteger(strikes) ||
      strikes < 0 ||
      !Number.isFinite(pausedForMs) ||
      pausedForMs < 0
    )
      return;
    const api = parseApiId(id);
    if (api.host === '' || api.env === '') return;
    // A host's id has no key (formatEnvId).
    if (api.key === '') {
      this.adoptHost(
        { host: api.host, env: api.env },
        { strikes, pausedForMs: Math.round(pausedForMs), suspect, moved },
      );
      return;
    }
    this.adopt(api, { strikes, pausedForMs: Math.round(pausedForMs) });
  }

  private failed(error: unknown): void {
    if (this.closed || this.outage !== null) return;
    this.outage = error instanceof Error ? error.message : String(error);
    this.options.log(
      'warn',
      'fault decisions are not shared while Redis cannot be reached; this instance decides alone',
      { error: this.outage },
    );
  }

  private reachable(): void {
    if (this.outage === null) return;
    this.outage = null;
    this.options.log('info', 'fault decisions are shared again', {});
  }
}
