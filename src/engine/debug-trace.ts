/**
 * EnableDebug's per-request trace: for every entry that runs after it, the parameters it got and
 * what it changed (status, headers, body, memory keys), with secrets hidden (redact.ts); written as
 * one line of the API's request log when the request is over, at most MAX_TRACE_BYTES.
 */
import type { DirectiveContext, StepWatcher, TraceStep } from '../engine/context.js';
import { isoTime } from '../shared/logs/iso-time.js';
import { REDACTED, Redactor } from '../shared/logs/redact.js';

/** How a body the router will stream from a file shows in the trace (it is not read for it). */
const FILE_BODY = '<file>';

/** A trace line larger than this drops its later steps (it says how many). */
export const MAX_TRACE_BYTES = 64 * 1024;

interface StepRecord {
  label: string;
  directive: string;
  pass: 'main' | 'after';
  params?: unknown;
  ms?: number;
  error?: { status: number; message: string };
  status?: number;
  headers?: Record<string, unknown>;
  body?: unknown;
  memory?: Record<string, unknown>;
}

export class DebugTrace implements StepWatcher {
  private readonly redactor: Redactor;
  private readonly steps: StepRecord[] = [];
  private readonly started = new Map<TraceStep, { at: number; params: unknown }>();
  private bytes = 0;
  private dropped = 0;
  private status: number;
  private headers: Map<string, string>;
  private body: unknown;
  private memory: Map<string, string>;
  private readonly request: Record<string, unknown>;

  constructor(ctx: DirectiveContext, marked: readonly string[]) {
    this.redactor = new Redactor(marked);
    const message = ctx.message;
    this.status = message.status;
    this.headers = this.headerTexts(ctx);
    this.body = message.bodyIsFile ? FILE_BODY : message.body;
    this.memory = this.memoryTexts(ctx);
    this.request = {
      verb: ctx.request.verb,
      path: ctx.request.path,
      query: this.redactor.value(Object.fromEntries(new URLSearchParams(ctx.request.query))),
      headers: this.redactor.headers(message.headers),
      body: this.redactor.body(message.body),
    };
  }

  before(step: TraceStep, params: Readonly<Record<string, unknown>>, secretParams: ReadonlySet<string>): void {
    try {
      this.started.set(step, { at: performance.now(), params: this.redactor.value(params, secretParams) });
    } catch {
      // A trace must never fail the request.
    }
  }

  after(step: TraceStep, ctx: DirectiveContext): void {
    try {
      const start = this.started.get(step);
      this.started.delete(step);
      const record: StepRecord = { label: step.label, directive: step.directive, pass: step.pass };
      if (start !== undefined) {
        record.params = start.params;
        record.ms = Math.round((performance.now() - start.at) * 1000) / 1000;
      }
      if (step.error !== undefined)
        record.error = { status: step.error.status, message: this.redactor.text(step.error.message) };
      this.changes(ctx, record);
      this.add(record);
    } catch {
      // A trace must never fail the request.
    }
  }

  finish(ctx: DirectiveContext): void {
    try {
      ctx.api.requestLog.append({
        time: isoTime(Date.now()),
        id: ctx.request.id,
        debug: true,
        route: ctx.request.route,
        release: ctx.api.release,
        request: this.request,
        status: ctx.sent?.status ?? ctx.message.status,
        steps: this.steps,
        ...(this.dropped > 0 ? { droppedSteps: this.dropped } : {}),
      });
    } catch (error) {
      ctx.api.log('warn', 'debug trace not written', { requestId: ctx.id, error: String(error) });
    }
  }

  /** What the step changed: status, headers, body, memory keys (each shown redacted). */
  private changes(ctx: DirectiveContext, record: StepRecord): void {
    const message = ctx.message;
    if (message.status !== this.status) record.status = this.status = message.status;
    const headers = this.headerTexts(ctx);
    const changed: Record<string, unknown> = {};
    for (const [name, text] of headers)
      if (this.headers.get(name) !== text)
        changed[name] = this.redactor.isSecret(name) ? REDACTED : this.redactor.value(JSON.parse(text));
    for (const name of this.headers.keys()) if (!headers.has(name)) changed[name] = null;
    if (Object.keys(changed).length > 0) record.headers = changed;
    this.headers = headers;
    if (message.bodyIsFile) {
      if (this.body !== FILE_BODY) record.body = FILE_BODY;
      this.body = FILE_BODY;
    } else {
      const body = message.body;
      if (body !== this.body) record.body = this.redactor.body(body);
      this.body = body;
    }
    const memory = this.memoryTexts(ctx);
    const written: Record<string, unknown> = {};
    const changedKeys: Record<string, unknown> = {};
    for (const [key, text] of memory) if (this.memory.get(key) !== text) changedKeys[key] = ctx.memory.data[key];
    Object.assign(written, this.redactor.value(changedKeys));
    if (Object.keys(written).length > 0) record.memory = written;
    this.memory = memory;
  }

  private add(record: StepRecord): void {
    const size = JSON.stringify(record).length;
    if (this.dropped > 0 || this.bytes + size > MAX_TRACE_BYTES) {
      this.dropped++;
      return;
    }
    this.bytes += size;
    this.steps.push(record);
  }

  private headerTexts(ctx: DirectiveContext): Map<string, string> {
    return new Map(Object.entries(ctx.message.headers).map(([name, value]) => [name, JSON.stringify(value)]));
  }

  /** Each top-level memory key as text, to tell what a step wrote. */
  private memoryTexts(ctx: DirectiveContext): Map<string, string> {
    const out = new Map<string, string>();
    for (const [key, value] of Object.entries(ctx.memory.data)) out.set(key, safeJson(value));
    return out;
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? String(v) : v)) ?? 'undefined';
  } catch {
    return `<${typeof value}>`;
  }
}
