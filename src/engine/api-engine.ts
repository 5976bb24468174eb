import { STATUS_CODES } from 'node:http';
import { CallBudget, DEFAULT_BUS_CALLS_PER_REQUEST } from './call-budget.js';
import type { CompiledRelease, EndpointDefinition } from '../shared/api-model/types.js';
import { isLoggedError, publicMessage, QuotaError, toStatusError } from '../shared/errors.js';
import { headerProblem } from '../shared/http/header-syntax.js';
import { responseHeadProblem } from '../shared/http/response-head.js';
import type { EngineRequest, OutgoingResponse } from '../shared/protocol/requests.js';
import { compileEntry, type CompiledEntry, type DirectiveLookup } from './compiled-entry.js';
import type { ApiRuntime, FlowError, RequestFacts, TraceStep } from './context.js';
import type { Continuation } from './continuation.js';
import { AFTER_FLOW, ERROR_FLOW } from './groups.js';
import type { ReleaseReason } from './held-resources.js';
import { Message } from './message.js';
import { RequestContext } from './request-context.js';
import { renderError, renderFlowError } from './render-error.js';
import { RouteTable } from './route-table.js';
import {
  endEntrySpan,
  endRequestSpan,
  startEntrySpan,
  startRequestSpan,
  traceUnrouted,
} from '../shared/tracing/request-spans.js';

export type SendResponse = (response: OutgoingResponse) => void;

/** Reports an error the client never sees in full (a 5xx message, an AFTER_FLOW failure). */
export type ErrorReporter = (event: {
  requestId: string;
  label: string;
  directive: string;
  status: number;
  message: string;
  pass: 'main' | 'after';
}) => void;

const CORRELATION_HEADER = 'x-correlation-id';

interface EntryList {
  /** `get /users/{id}` (RequestFacts.route). */
  route: string;
  entries: readonly CompiledEntry[];
  /** False when no entry names AFTER_FLOW: the second pass is skipped. */
  hasAfterFlow: boolean;
}

/**
 * Runs the flow of SPEC §4 for one API release: `before`, the endpoint and `after` as one list, each
 * entry only when one of its groups is enabled; errors switch to ERROR_FLOW; the response is sent;
 * then a second pass runs the AFTER_FLOW entries. The engine knows no directive by name.
 */
export class ApiEngine {
  private readonly routes: RouteTable;
  private readonly lists = new Map<EndpointDefinition, EntryList>();
  private readonly endpointsByKey = new Map<string, EndpointDefinition>();

  constructor(
    release: CompiledRelease,
    private readonly runtime: ApiRuntime,
    private readonly lookup: DirectiveLookup,
    private readonly reportError: ErrorReporter = () => {},
  ) {
    const def = release.definition;
    this.routes = new RouteTable(def.endpoints);
    const before = def.before.map((e) => compileEntry(e, 'before', lookup));
    const after = def.after.map((e) => compileEntry(e, 'after', lookup));
    for (const endpoint of def.endpoints) {
      const route = `${endpoint.verb} ${endpoint.path}`;
      this.endpointsByKey.set(route, endpoint);
      const entries = [...before, ...endpoint.entries.map((e) => compileEntry(e, 'endpoint', lookup)), ...after];
      this.lists.set(endpoint, { route, entries, hasAfterFlow: entries.some((e) => e.groups.includes(AFTER_FLOW)) });
    }
  }

  /**
   * Runs the request; `send` is called exactly once, before the AFTER_FLOW pass. Returns a promise
   * only when the request waits for something (a directive's promise, a job's continuation); a
   * defect of the engine may then reject it, or else throw here.
   */
  handle(request: EngineRequest, send: SendResponse): void | Promise<void> {
    if (request.job !== undefined) return this.resume(request, request.job, send);
    const match = this.routes.match(request.verb, request.path);
    if (match.kind === 'none') {
      if (this.runtime.tracer !== null) traceUnrouted(this.runtime.tracer, request, this.runtime, 404);
      send(unspent(plainJson(404, { error: 'Not Found' }, request.id), request));
      return;
    }
    if (match.kind === 'options') {
      if (this.runtime.tracer !== null) traceUnrouted(this.runtime.tracer, request, this.runtime, 204);
      send(
        unspent(
          { status: 204, headers: ['allow', match.allow.join(', '), CORRELATION_HEADER, request.id], body: null },
          request,
        ),
      );
      return;
    }
    const endpoint = match.endpoint;
    const list = this.lists.get(endpoint)!;
    const route = list.route;
    // Not `{ ...response, route }`: on Node 20's V8 a spread followed by a new property takes a slow
    // path (12x slower in isolation) whose objects get promoted to the old generation; with it every
    // actor thread promoted ~130 KB per young GC and ran a Mark-Compact every few seconds.
    const sendRouted: SendResponse = (response) =>
      send({
        status: response.status,
        headers: response.headers,
        body: response.body,
        file: response.file,
        route,
        budgetLeft: response.budgetLeft,
      });
    const facts: RequestFacts = {
      id: request.id,
      ip: request.ip,
      hop: request.hop,
      viaBus: request.viaBus,
      receivedAt: request.receivedAt,
      definitionVerb: endpoint.verb,
      definitionPath: endpoint.path,
      route,
      verb: request.verb.toUpperCase(),
      path: request.path,
      query: request.rawQuery,
      headers: request.rawHeaders,
      job: false,
    };
    const ctx = new RequestContext(
      new Message(request, this.runtime.maxJsonDepth),
      this.runtime,
      facts,
      match.pathParams,
    );
    ctx.lookup = this.lookup;
    ctx.busCalls = new CallBudget(budgetOf(request));
    if (this.runtime.tracer !== null)
      ctx.requestSpan = startRequestSpan(this.runtime.tracer, request, this.runtime, endpoint.path, false);
    return this.run(ctx, list, 0, sendRouted);
  }

  /**
   * A queued job (SPEC §8): the rest of the endpoint's list after the entry that queued it, with the
   * memory and message of that moment, NORMAL_FLOW enabled and `$.id` the job id; then AFTER_FLOW.
   * It runs in the release current now: the endpoint and the entry are found by name.
   */
  private async resume(request: EngineRequest, job: string, send: SendResponse): Promise<void> {
    let continuation: Continuation;
    try {
      continuation = JSON.parse(job) as Continuation;
    } catch {
      return send(plainJson(500, { error: 'the job is not readable' }, request.id));
    }
    const endpoint = this.endpointsByKey.get(continuation.endpoint);
    const list = endpoint === undefined ? undefined : this.lists.get(endpoint);
    const index = list?.entries.findIndex((e) => e.key === continuation.after) ?? -1;
    if (endpoint === undefined || list === undefined || index < 0) {
      const message = `the job's endpoint "${continuation.endpoint}" or entry "${continuation.after}" is not in release ${this.runtime.release}`;
      this.reportError({
        requestId: request.id,
        label: '(job)',
        directive: '(job)',
        status: 500,
        message,
        pass: 'main',
      });
      return send(plainJson(500, { error: message }, request.id));
    }
    const message = Message.restore(continuation.message, this.runtime.maxJsonDepth);
    const facts: RequestFacts = {
      id: request.id,
      ip: continuation.ip,
      hop: 0,
      viaBus: false,
      receivedAt: request.receivedAt,
      definitionVerb: endpoint.verb,
      definitionPath: endpoint.path,
      route: list.route,
      verb: message.verb,
      path: message.path,
      query: message.queryString,
      headers: [],
      job: true,
    };
    const ctx = new RequestContext(message, this.runtime, facts, continuation.pathParams, continuation.memory);
    ctx.lookup = this.lookup;
    ctx.busCalls = new CallBudget(budgetOf(request));
    if (this.runtime.tracer !== null)
      ctx.requestSpan = startRequestSpan(this.runtime.tracer, request, this.runtime, endpoint.path, true);
    const pending = this.run(ctx, list, index + 1, send);
    if (pending !== undefined) await pending;
  }

  /**
   * The passes run synchronously for as long as their directives do (most requests never wait):
   * only from the first directive that returns a promise on does the rest of the request continue
   * asynchronously. Returns a promise only then.
   */
  private run(ctx: RequestContext, list: EntryList, start: number, send: SendResponse): void | Promise<void> {
    let main: number | Promise<number>;
    try {
      main = this.runPass(ctx, list.entries, 'main', start);
    } catch (error) {
      return this.respond(ctx, list, send, this.engineFailure(ctx, error));
    }
    if (typeof main === 'number') return this.completeMain(ctx, list, main, send);
    return main.then(
      (versionAtError) => this.completeMain(ctx, list, versionAtError, send),
      (error: unknown) => this.respond(ctx, list, send, this.engineFailure(ctx, error)),
    );
  }

  /** After the main pass: the error settled (asynchronously: rendering it may wait), then the response. */
  private completeMain(
    ctx: RequestContext,
    list: EntryList,
    versionAtError: number,
    send: SendResponse,
  ): void | Promise<void> {
    if (ctx.error !== null) return this.settleThenRespond(ctx, list, ctx.error, versionAtError, send);
    let response: OutgoingResponse;
    try {
      response = this.finish(ctx);
    } catch (error) {
      response = this.engineFailure(ctx, error);
    }
    return this.respond(ctx, list, send, response);
  }

  private async settleThenRespond(
    ctx: RequestContext,
    list: EntryList,
    error: FlowError,
    versionAtError: number,
    send: SendResponse,
  ): Promise<void> {
    let response: OutgoingResponse;
    try {
      await this.settleError(ctx, error, versionAtError);
      response = this.finish(ctx);
    } catch (thrown) {
      response = this.engineFailure(ctx, thrown);
    }
    return this.respond(ctx, list, send, response);
  }

  /** Only a defect of the engine itself lands here: directive errors are handled in the pass. */
  private engineFailure(ctx: RequestContext, error: unknown): OutgoingResponse {
    const { message } = toStatusError(error);
    this.reportError({
      requestId: ctx.id,
      label: '(engine)',
      directive: '(engine)',
      status: 500,
      message,
      pass: 'main',
    });
    return plainJson(500, { error: publicMessage(500, message, this.runtime.debug) }, ctx.id);
  }

  /** Sends the response, then runs the AFTER_FLOW pass. */
  private respond(
    ctx: RequestContext,
    list: EntryList,
    send: SendResponse,
    response: OutgoingResponse,
  ): void | Promise<void> {
    ctx.sent = response;
    // A bus call's answer gives back what the request did not use of its lease (engine/call-budget.ts).
    if (ctx.request.viaBus) response.budgetLeft = ctx.busCalls.answer(list.hasAfterFlow);
    send(response);
    if (ctx.requestSpan !== null) endRequestSpan(ctx.requestSpan, response.status, ctx.error?.message);
    if (list.hasAfterFlow) {
      ctx.groups.reset([AFTER_FLOW]);
      const after = this.runPass(ctx, list.entries, 'after');
      if (typeof after !== 'number') return after.then(() => ctx.stepWatcher?.finish(ctx));
    }
    ctx.stepWatcher?.finish(ctx);
  }

  /**
   * Runs one pass over the list: each entry whose groups are enabled. In the main pass a throw
   * switches to ERROR_FLOW; in the AFTER_FLOW pass it is only reported. Returns the message version
   * when the last error was caught (-1: no error), so `settleError` can tell whether anyone rendered it.
   * What the request still holds when the pass ends (an open transaction) is released then.
   */
  private runPass(
    ctx: RequestContext,
    list: readonly CompiledEntry[],
    pass: 'main' | 'after',
    start = 0,
  ): number | Promise<number> {
    let result: number | Promise<number>;
    try {
      result = this.runEntries(ctx, list, pass, start, -1);
    } catch (error) {
      this.releaseHeld(ctx, 'end', pass);
      throw error;
    }
    if (typeof result === 'number') {
      this.releaseHeld(ctx, 'end', pass);
      return result;
    }
    return result.finally(() => this.releaseHeld(ctx, 'end', pass));
  }

  /**
   * The entries from `start` on, synchronously until one returns a promise (then `continueAfter`
   * waits for it and goes on). `versionAtError`: as `runPass` returns it, for the entries before `start`.
   */
  private runEntries(
    ctx: RequestContext,
    list: readonly CompiledEntry[],
    pass: 'main' | 'after',
    start: number,
    versionAtError: number,
  ): number | Promise<number> {
    for (let i = start; i < list.length; i++) {
      const entry = list[i]!;
      if (!ctx.groups.anyEnabled(entry.groups)) continue;
      ctx.entryKey = entry.key;
      const step: TraceStep = { label: entry.label, directive: entry.directiveName, pass };
      ctx.trace.push(step);
      if (ctx.requestSpan !== null)
        ctx.entrySpan = startEntrySpan(ctx.requestSpan, entry.label, entry.directiveName, pass, this.runtime);
      try {
        const params = entry.params(ctx);
        ctx.stepWatcher?.before(step, params, entry.secretParams);
        const result = entry.directive.run(ctx, params);
        if (result !== undefined && typeof (result as Promise<void>).then === 'function') {
          return this.continueAfter(ctx, list, pass, i, step, result as Promise<void>, versionAtError);
        }
      } catch (thrown) {
        versionAtError = this.caught(ctx, entry, step, pass, thrown, versionAtError);
      }
      this.endEntry(ctx, step);
    }
    return versionAtError;
  }

  /** Entry `i` returned a promise: once it settles, the entries after it. */
  private async continueAfter(
    ctx: RequestContext,
    list: readonly CompiledEntry[],
    pass: 'main' | 'after',
    i: number,
    step: TraceStep,
    pending: Promise<void>,
    versionAtError: number,
  ): Promise<number> {
    try {
      await pending;
    } catch (thrown) {
      versionAtError = this.caught(ctx, list[i]!, step, pass, thrown, versionAtError);
    }
    this.endEntry(ctx, step);
    return this.runEntries(ctx, list, pass, i + 1, versionAtError);
  }

  /** A directive threw: the flow switches to ERROR_FLOW (main pass) or the error is only reported (AFTER_FLOW). */
  private caught(
    ctx: RequestContext,
    entry: CompiledEntry,
    step: TraceStep,
    pass: 'main' | 'after',
    thrown: unknown,
    versionAtError: number,
  ): number {
    const { status, message, code } = toStatusError(thrown);
    step.error = { status, message };
    // What the request held (a transaction) is let go of before anything else runs.
    this.releaseHeld(ctx, 'error', pass);
    if (pass === 'main') {
      ctx.error = { status, message, code, label: entry.label, directive: entry.directiveName };
      ctx.memory.set('error', { status, message });
      ctx.groups.enable(ERROR_FLOW);
      versionAtError = ctx.message.version;
    }
    if (pass === 'after' || isLoggedError(thrown, status)) {
      this.reportError({
        requestId: ctx.id,
        label: entry.label,
        directive: entry.directiveName,
        status,
        message,
        pass,
      });
    }
    return versionAtError;
  }

  private endEntry(ctx: RequestContext, step: TraceStep): void {
    if (ctx.entrySpan !== null) {
      endEntrySpan(ctx.entrySpan, step.error);
      ctx.entrySpan = null;
    }
    ctx.stepWatcher?.after(step, ctx);
  }

  /** Releases what the request still holds; a failure to do so is reported (the flow goes on). */
  private releaseHeld(ctx: RequestContext, reason: ReleaseReason, pass: 'main' | 'after'): void {
    for (const { name, error } of ctx.held.releaseAll(reason)) {
      const message = `releasing ${name}: ${toStatusError(error).message}`;
      this.reportError({ requestId: ctx.id, label: '(engine)', directive: '(engine)', status: 500, message, pass });
    }
  }

  /**
   * The runtime renders an error nobody rendered (the way the request chose, else JSON), and an
   * error never leaves as a 2xx.
   */
  private async settleError(ctx: RequestContext, error: FlowError, versionAtError: number): Promise<void> {
    if (versionAtError !== ctx.message.version) {
      if (ctx.message.status < 300) ctx.message.status = error.status;
      return;
    }
    try {
      await renderFlowError(ctx, error);
    } catch (thrown) {
      const failure = toStatusError(thrown);
      this.reportError({
        requestId: ctx.id,
        label: '(engine)',
        directive: '(engine)',
        status: failure.status,
        message: `rendering the error failed: ${failure.message}`,
        pass: 'main',
      });
      renderError(ctx, error.status, error.message, error.code);
    }
  }

  /**
   * Builds the response: the correlation header, and the message as it is, unless its head cannot
   * be sent (responseHeadProblem): that becomes a 500 here, where every flow's answer ends, so the
   * router is never handed it.
   */
  private finish(ctx: RequestContext): OutgoingResponse {
    const message = ctx.message;
    if (!message.isResponseHeader(CORRELATION_HEADER))
      message.setRuntimeHeader(CORRELATION_HEADER, this.correlationId(ctx));
    // Only the router streams a file body: a bus caller or a job gets the bytes.
    const response = message.toResponse(ctx.request.viaBus || ctx.request.job);
    const problem = responseHeadProblem(response.status, response.headers, this.runtime.quotas);
    if (problem === null) return response;
    if (problem instanceof QuotaError) this.runtime.refusals.add(problem.quota);
    this.reportError({
      requestId: ctx.id,
      label: '(response)',
      directive: '(response)',
      status: problem.status,
      message: `${problem.code}: ${problem.message}`,
      pass: 'main',
    });
    return plainJson(
      problem.status,
      { error: publicMessage(problem.status, problem.message, this.runtime.debug || ctx.request.job, problem.code) },
      ctx.id,
    );
  }

  /** Memory's `correlationId` when a directive set one a header can carry, else the request's id. */
  private correlationId(ctx: RequestContext): string {
    const value = ctx.memory.get('correlationId');
    if (value === ctx.id || typeof value !== 'string') return ctx.id;
    const problem = headerProblem(CORRELATION_HEADER, value);
    if (problem === null) return value;
    const message = `memory correlationId cannot be sent (${problem}); the response carries the request id instead`;
    this.reportError({
      requestId: ctx.id,
      label: '(engine)',
      directive: '(engine)',
      status: 500,
      message,
      pass: 'main',
    });
    return ctx.id;
  }
}

/** A bus call's answer that no entry ran for: its whole lease goes back. */
function unspent(response: OutgoingResponse, request: EngineRequest): OutgoingResponse {
  if (request.viaBus) response.budgetLeft = budgetOf(request);
  return response;
}

/** The request's budget of bus calls; a request made without one (by hand, in a bench) gets the default. */
function budgetOf(request: EngineRequest): number {
  return Number.isInteger(request.budget) && request.budget >= 0 ? request.budget : DEFAULT_BUS_CALLS_PER_REQUEST;
}

function plainJson(status: number, value: unknown, id: string): OutgoingResponse {
  return {
    status,
    headers: ['content-type', 'application/json; charset=utf-8', CORRELATION_HEADER, id],
    body: JSON.stringify(value ?? { error: STATUS_CODES[status] }),
  };
}
