/**
 * The host side of the `state` facade (sandbox/bootstrap.js): every call from a custom directive
 * arrives here as an operation code (bridge-ops.ts) and copied arguments, and acts on the request's
 * DirectiveContext. Replies are `{ ok: value }`, `{ error: { status, message } }`, or undefined
 * when there is nothing to give back; values go back as copies, so no host object is ever reachable
 * from the isolate.
 */
import type { DirectiveContext } from '../../engine/context.js';
import type { HeaderValue, QueryValue } from '../../engine/message.js';
import { checkParams } from '../../engine/param-check.js';
import type { AnyDirectiveDefinition } from '../../engine/directive-types.js';
import { AnvilError, Errors, QuotaError, toStatusError } from '../../shared/errors.js';
import { hostBytes } from '../../engine/host-memory.js';
import { BridgeOp, type BridgeResult, type StateOpCode } from './bridge-ops.js';

export type HostReply = { ok: unknown } | { error: { status: number; message: string } };

/** What a custom directive's SQL runs against: the API's own database. */
export interface SandboxDatabase {
  all(sql: string, params?: unknown): unknown;
  get(sql: string, params?: unknown): unknown;
  run(sql: string, params?: unknown): unknown;
}

export interface BridgeServices {
  /** Built-in directives a custom directive may compose with `state.run`. */
  builtin(name: string): AnyDirectiveDefinition | undefined;
  database(ctx: DirectiveContext): SandboxDatabase;
}

/** The API's own custom directives, which `state.run` may call too (sandbox.ts runs them). */
export interface NestedCalls {
  has(name: string): boolean;
  /** Runs `name` as a call nested in the call `parentId` (same request, its limits shared, its depth counted). */
  run(parentId: number, ctx: DirectiveContext, name: string, params: Record<string, unknown>): void | Promise<void>;
}

const bad = Errors.sandboxBadCall;
/** Where the host memory budget counts the response headers and the groups a custom directive set. */
const HEADERS_PLACE = 'the response headers';
const GROUPS_PLACE = 'the enabled groups';

/**
 * `state.run` calls one call may have under way at once (waiting for a place or running): the next
 * one throws in the isolate. What a call leaves un-awaited stops with it (see `close`), so this
 * bounds the host work one call can queue up.
 */
export const MAX_PENDING_RUNS = 256;
/** Of those, how many run at once; the others wait in order, and are dropped if the call ends first. */
export const MAX_RUNNING_RUNS = 16;

/** The host side of one call's `state`: it acts on that call's request only, and only while the call runs. */
export class HostBridge {
  private closed = false;
  private nextTicket = 1;
  /**
   * The refusals its operations answered (a few at most: each ends a write): quotas, and values
   * over the memory limit; a call that lets one through fails with it (its code, its count).
   */
  private readonly refusals: AnvilError[] = [];
  /** What the response headers and the groups this call set hold on the host (names and values; never less when one is removed). */
  private headerBytes = 0;
  private groupBytes = 0;
  /** Runs started and not settled yet (waiting and running). */
  private pendingRuns = 0;
  private runningRuns = 0;
  /** Runs waiting for a place (MAX_RUNNING_RUNS), in the order they were started. */
  private readonly waitingRuns: Array<() => void> = [];

  constructor(
    private readonly ctx: DirectiveContext,
    private readonly name: string,
    private readonly services: BridgeServices,
    /** Delivers the reply of a `state.run` into the isolate (not called once the call is over). */
    private readonly settle: (ticket: number, reply: HostReply) => void,
    private readonly nested: NestedCalls | null = null,
    /** The call this bridge serves, for the calls it nests. */
    private readonly callId = 0,
  ) {}

  /**
   * An operation of `state` (arguments as BridgeOpShapes has them, checked here all the same).
   * Everything but `run` is done at once; `run(directive, params)` starts the directive (a built-in, or a custom one) and returns a
   * ticket, and `settle` gets the ticket and the reply when it is done. An operation that gives
   * nothing back replies undefined: nothing to copy into the isolate.
   */
  handle(op: StateOpCode, a: unknown, b: unknown): HostReply | undefined {
    try {
      if (this.closed) throw bad(`${this.name}: the call is over; state can no longer be used`);
      const value = this.operate(op, a, b);
      return value === undefined ? undefined : { ok: value };
    } catch (error) {
      const { status, message } = toStatusError(error);
      this.noteRefusal(error);
      // The directive may catch it, and a 4xx it rethrows is not logged by the engine: log it here.
      if (error instanceof AnvilError && error.logged)
        this.ctx.api.log('warn', 'directive error', { requestId: this.ctx.id, directive: this.name, status, message });
      return { error: { status, message } };
    }
  }

  /**
   * The error a call that failed with `failure` (its outcome, as the isolate reports it) ends in:
   * the refusal it let through, when it is one of its operations' (its code, its message
   * shown to clients, its count), else `failure` itself.
   */
  failure(failure: AnvilError | null): AnvilError | null {
    if (failure === null) return null;
    return this.refusals.find((q) => q.status === failure.status && q.message === failure.message) ?? failure;
  }

  private noteRefusal(error: unknown): void {
    if (this.refusals.length >= 8 || !(error instanceof AnvilError)) return;
    if (
      error instanceof QuotaError ||
      error.code === Errors.hostMemory.code ||
      error.code === Errors.sandboxValueSize.code
    )
      this.refusals.push(error);
  }

  /**
   * A value the directive hands the host, checked before the host does anything with it: the
   * bootstrap measured it before it was copied (and refused it past the limit, `refuse`), but a
   * getter may answer the copy differently, so the copy is measured again, as cheaply (a sparse
   * array by its length, a buffer by its size).
   */
  private bounded<T>(value: T, what: string): T {
    const limit = this.ctx.api.hostMemoryBytes;
    if (hostBytes(value, limit) > limit) throw this.tooBig(what);
    return value;
  }

  private countHeaders(bytes: number): void {
    this.headerBytes = bytes;
    this.ctx.message.budget?.chargeOtherBytes(HEADERS_PLACE, bytes);
  }

  private tooBig(what: string): AnvilError {
    return Errors.sandboxValueSize(this.name, what, Math.round(this.ctx.api.hostMemoryBytes / 2 ** 20));
  }

  /**
   * The call is over (it returned, threw, or breached a limit): the runs it started that have not
   * begun are dropped, and those in flight are no longer awaited (their replies are never delivered:
   * in the isolate they stay unsettled, and the call's state is gone).
   */
  close(): void {
    this.closed = true;
    this.waitingRuns.length = 0;
  }

  private start(a: unknown, b: unknown): number {
    if (this.pendingRuns >= MAX_PENDING_RUNS)
      throw Errors.sandboxTooManyRuns(this.name, String(a).slice(0, 100), MAX_PENDING_RUNS);
    const ticket = this.nextTicket++;
    this.pendingRuns++;
    const begin = (): void => {
      this.runningRuns++;
      void this.runDirective(a, b).then((reply) => {
        this.runningRuns--;
        this.pendingRuns--;
        if (this.closed) return;
        // The next waiting run takes the place before the reply lets the directive start more.
        this.waitingRuns.shift()?.();
        this.settle(ticket, reply);
      });
    };
    if (this.runningRuns < MAX_RUNNING_RUNS) begin();
    else this.waitingRuns.push(begin);
    return ticket;
  }

  /** A built-in, or a custom directive of the API (run once this call's stretch is over: the isolate is busy with it). */
  private async runDirective(a: unknown, b: unknown): Promise<HostReply> {
    try {
      const name = String(a);
      const params = isRecord(b) ? this.bounded(b, `the parameters of run("${name.slice(0, 100)}")`) : {};
      const directive = this.services.builtin(name);
      if (directive !== undefined) {
        checkParams(directive, params, `${this.name} → run("${directive.name}")`);
        await directive.run(this.ctx, params);
      } else if (this.nested?.has(name)) {
        await null;
        // A run the directive did not await is never started once its call is over.
        if (!this.closed) await this.nested.run(this.callId, this.ctx, name, params);
      } else {
        throw bad(`${this.name}: run("${name}"): there is no built-in directive or Directives/${name}.js of that name`);
      }
      return { ok: null };
    } catch (error) {
      const { status, message } = toStatusError(error);
      this.noteRefusal(error);
      return { error: { status, message } };
    }
  }

  /** Typed as the isolate should send it; a code of no operation still lands in `default`. */
  private operate(op: StateOpCode, a: unknown, b: unknown): unknown {
    const { ctx } = this;
    switch (op) {
      case BridgeOp.memoryGet:
        return ctx.memory.get(String(a)) ?? null;
      case BridgeOp.memorySet:
        ctx.memory.set(String(a), b);
        return undefined satisfies BridgeResult<'memorySet'>;
      case BridgeOp.messageGet:
        return this.readMessage(String(a));
      case BridgeOp.messageSet:
        this.writeMessage(String(a), b);
        return undefined satisfies BridgeResult<'messageSet'>;
      case BridgeOp.messageAddHeader: {
        const name = String(a);
        const value = headerValue(this.bounded(b, 'the value of message.addHeader'), name, this.name);
        // set-cookie values add up: what the headers hold is counted as they grow.
        this.countHeaders(this.headerBytes + name.length + hostBytes(value, Infinity));
        this.ctx.message.addHeader(name, value);
        return undefined satisfies BridgeResult<'messageAddHeader'>;
      }
      case BridgeOp.groupsEnable: {
        const name = String(a);
        this.groupBytes += name.length + 16;
        ctx.message.budget?.chargeOtherBytes(GROUPS_PLACE, this.groupBytes);
        ctx.groups.enable(name);
        return undefined satisfies BridgeResult<'groupsEnable'>;
      }
      case BridgeOp.groupsDisable:
        ctx.groups.disable(String(a));
        return undefined satisfies BridgeResult<'groupsDisable'>;
      case BridgeOp.groupsDisableAll:
        ctx.groups.disableAll();
        return undefined satisfies BridgeResult<'groupsDisableAll'>;
      case BridgeOp.groupsIsEnabled:
        return ctx.groups.isEnabled(String(a)) satisfies BridgeResult<'groupsIsEnabled'>;
      case BridgeOp.map: {
        const maps = ctx.api.maps;
        return Object.hasOwn(maps, String(a)) ? maps[String(a)] : null;
      }
      case BridgeOp.dbAll:
        return this.services.database(ctx).all(String(a), this.bounded(b, 'the parameters of db.all') ?? undefined);
      case BridgeOp.dbGet:
        return (
          this.services.database(ctx).get(String(a), this.bounded(b, 'the parameters of db.get') ?? undefined) ?? null
        );
      case BridgeOp.dbRun:
        return this.services.database(ctx).run(String(a), this.bounded(b, 'the parameters of db.run') ?? undefined);
      case BridgeOp.run:
        return this.start(a, b) satisfies BridgeResult<'run'>;
      case BridgeOp.refuse:
        throw this.tooBig(String(a));
      default:
        return unknownOperation(op);
    }
  }

  private readMessage(field: string): unknown {
    const message = this.ctx.message;
    switch (field) {
      case 'verb':
        return message.verb;
      case 'path':
        return message.path;
      case 'status':
        return message.status;
      case 'headers':
        return { ...message.headers };
      case 'query':
        return { ...message.query };
      case 'pathParams':
        return { ...this.ctx.pathParams };
      case 'body': {
        // JSON bodies arrive parsed; anything else as text (null when there is none).
        const json = message.bodyJson();
        return json !== null ? json : message.bodyText();
      }
      default:
        throw bad(`state.message has no field "${field}"`);
    }
  }

  private writeMessage(field: string, value: unknown): void {
    const message = this.ctx.message;
    // Counted where they are kept (body) or short ones checked (verb, path, status); these are walked here first.
    if (field === 'headers' || field === 'query') this.bounded(value, `message.${field}`);
    switch (field) {
      case 'verb':
        if (typeof value !== 'string' || !/^[A-Za-z]+$/.test(value))
          throw bad(`${this.name}: message.verb must be a word such as "POST"`);
        message.verb = value.toUpperCase();
        return;
      case 'path':
        if (typeof value !== 'string' || !value.startsWith('/'))
          throw bad(`${this.name}: message.path must be a string starting with "/"`);
        message.path = value;
        return;
      case 'status':
        if (!Number.isInteger(value) || (value as number) < 100 || (value as number) > 599)
          throw bad(`${this.name}: message.status must be an integer from 100 to 599`);
        message.status = value as number;
        return;
      case 'headers': {
        const headers = stringMap(value, 'headers', this.name);
        this.countHeaders(hostBytes(headers, Infinity));
        message.replaceHeaders(headers as Record<string, HeaderValue>);
        return;
      }
      case 'query':
        message.query = stringMap(value, 'query', this.name) as Record<string, QueryValue>;
        return;
      case 'body':
        // The bootstrap sends any other value as `bodyJson`: the host never encodes a directive's value.
        if (typeof value !== 'string' && value !== null)
          throw bad(`${this.name}: message.body: the bootstrap sent a value that is not text`);
        message.setBody(value);
        return;
      case 'bodyJson':
        if (typeof value !== 'string')
          throw bad(`${this.name}: message.body: the bootstrap sent JSON that is not text`);
        message.setJsonBody(value);
        return;
      default:
        throw bad(`state.message.${field} cannot be set`);
    }
  }
}

/** Exhaustive: a BridgeOp added without a case here does not compile. */
function unknownOperation(op: never): never {
  throw bad(`unknown operation ${String(op)}`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function headerValue(value: unknown, header: string, name: string): string | string[] {
  if (Array.isArray(value)) return value.map(String);
  if (value === null || value === undefined || typeof value === 'object')
    throw bad(`${name}: message.addHeader("${header}", …) takes a string or a list of strings`);
  return String(value);
}

function stringMap(value: unknown, field: string, name: string): Record<string, string | string[]> {
  if (!isRecord(value)) throw bad(`${name}: message.${field} must be an object of strings`);
  const out: Record<string, string | string[]> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item === null || item === undefined) continue;
    out[key] = Array.isArray(item) ? item.map(String) : String(item);
  }
  return out;
}
