import { Errors } from '../shared/errors.js';
import { RESPONSE_BODY, type HostMemoryBudget } from './host-memory.js';
import { headerProblem } from '../shared/http/header-syntax.js';
import { DEFAULT_MAX_JSON_DEPTH, isNestedDeeperThan } from '../shared/http/json-depth.js';
import type { IncomingRequest, OutgoingResponse } from '../shared/protocol/requests.js';
import { readFileRefSync, type FileRef } from '../shared/protocol/file-ref.js';

export type HeaderValue = string | string[];
export type QueryValue = string | string[];

/** A message frozen into plain JSON (a job carries the message as it was when it was queued). */
export interface MessageSnapshot {
  verb: string;
  path: string;
  query: string;
  headers: Record<string, HeaderValue>;
  responseHeaders: string[];
  /** base64 when `bodyBase64`, else the text; null when there is none. */
  body: string | null;
  bodyBase64: boolean;
  bodySet: boolean;
  bodyIsJson: boolean;
  status: number;
}

/**
 * The message of SPEC §4: it starts as the incoming request and directives edit it. Only headers
 * and a body that a directive (or an upstream) set reach the response, so nothing of the request is
 * echoed back by accident. `version` counts edits of the response parts, so the engine can tell
 * whether an error was rendered by an ERROR_FLOW entry.
 */
export class Message {
  verb: string;
  path: string;
  private rawQuery: string;
  private parsedQuery: Record<string, QueryValue> | null = null;
  private rawHeaders: string[] | null;
  private headerMap: Record<string, HeaderValue> | null = null;
  private bodyValue: Buffer | string | null;
  /** A body that is a file not read yet (setFileBody); read when a directive asks for the body. */
  private bodyFile: FileRef | null = null;
  private bodyIsJson = false;
  private jsonCache: { source: Buffer | string | null; value: unknown } | null = null;
  private statusValue = 200;
  private responseHeaderNames = new Set<string>();
  private bodySet = false;
  /** What a body set here counts against (host-memory.ts); the request's own body is not counted. */
  budget: HostMemoryBudget | null = null;
  version = 0;

  /** `maxJsonDepth`: how deep a JSON body may nest before bodyJson refuses it (400). */
  constructor(
    request: IncomingRequest,
    private readonly maxJsonDepth = DEFAULT_MAX_JSON_DEPTH,
  ) {
    this.verb = request.verb.toUpperCase();
    this.path = request.path;
    this.rawQuery = request.rawQuery;
    this.rawHeaders = request.rawHeaders;
    this.bodyValue = request.body;
  }

  get status(): number {
    return this.statusValue;
  }

  set status(value: number) {
    this.statusValue = value;
    this.version++;
  }

  get query(): Record<string, QueryValue> {
    if (this.parsedQuery === null) this.parsedQuery = parseQuery(this.rawQuery);
    return this.parsedQuery;
  }

  set query(value: Record<string, QueryValue>) {
    this.parsedQuery = Object.assign(ownKeysOnly<QueryValue>(), value);
    this.rawQuery = '';
  }

  /** The query string to send upstream (without `?`). */
  get queryString(): string {
    if (this.parsedQuery === null) return this.rawQuery;
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(this.parsedQuery)) {
      if (Array.isArray(v)) for (const item of v) params.append(k, item);
      else params.append(k, v);
    }
    return params.toString();
  }

  get headers(): Readonly<Record<string, HeaderValue>> {
    return this.headerTable();
  }

  header(name: string): HeaderValue | null {
    return this.headerTable()[name.toLowerCase()] ?? null;
  }

  /** Sets a response header; a name or value node:http could not write throws here (500), naming it. */
  setHeader(name: string, value: HeaderValue): void {
    const lower = name.toLowerCase();
    checkHeader(lower, value);
    this.storeHeader(lower, value);
  }

  /**
   * Adds one response header and keeps the others: a name already set is replaced, except
   * `set-cookie`, whose values add up (one cookie does not remove another). A `set-cookie` of the
   * request is never added to: only values set for the response are kept.
   */
  addHeader(name: string, value: HeaderValue): void {
    const lower = name.toLowerCase();
    checkHeader(lower, value);
    const existing = this.responseHeaderNames.has(lower) ? this.headerTable()[lower] : undefined;
    if (lower === 'set-cookie' && existing !== undefined)
      this.storeHeader(lower, [...[existing].flat(), ...[value].flat()]);
    else this.storeHeader(lower, value);
  }

  /**
   * Sets a response header the runtime made itself (a lower-case name, the request id) without the
   * check: it costs about 0.1 µs, and this runs on every request.
   */
  setRuntimeHeader(name: string, value: string): void {
    this.storeHeader(name, value);
  }

  private storeHeader(lower: string, value: HeaderValue): void {
    this.headerTable()[lower] = value;
    this.responseHeaderNames.add(lower);
    this.version++;
  }

  /** True when a directive (or an upstream) set this header for the response. */
  isResponseHeader(name: string): boolean {
    return this.responseHeaderNames.has(name.toLowerCase());
  }

  removeHeader(name: string): void {
    const lower = name.toLowerCase();
    delete this.headerTable()[lower];
    this.responseHeaderNames.delete(lower);
    this.version++;
  }

  /**
   * Replaces the headers as a proxy prelude does (x-forwarded-*, hop-by-hop removed) without making
   * them response headers: only names a directive had already set for the response stay so.
   */
  rewriteRequestHeaders(headers: Record<string, HeaderValue>): void {
    const table = ownKeysOnly<HeaderValue>();
    for (const [k, v] of Object.entries(headers)) table[k.toLowerCase()] = v;
    this.headerMap = table;
    this.rawHeaders = null;
    for (const name of [...this.responseHeaderNames]) if (!(name in table)) this.responseHeaderNames.delete(name);
  }

  /** Replaces every header; all of them are then response headers, so each is checked as setHeader does. */
  replaceHeaders(headers: Record<string, HeaderValue>): void {
    const table = ownKeysOnly<HeaderValue>();
    for (const [k, v] of Object.entries(headers)) {
      const lower = k.toLowerCase();
      checkHeader(lower, v);
      table[lower] = v;
    }
    this.headerMap = table;
    this.rawHeaders = null;
    this.responseHeaderNames = new Set(Object.keys(table));
    this.version++;
  }

  /** True while the body is a file not read yet (reading `body` would read it). */
  get bodyIsFile(): boolean {
    return this.bodyFile !== null;
  }

  get body(): Buffer | string | null {
    if (this.bodyFile !== null) {
      this.bodyValue = readFileRefSync(this.bodyFile);
      this.bodyFile = null;
    }
    return this.bodyValue;
  }

  /**
   * Makes a file the body without reading it: the router streams it to the client. A directive
   * that reads the body later gets its bytes; an answer to a bus call or a job carries them.
   */
  setFileBody(file: FileRef): void {
    this.bodyValue = null;
    this.bodyFile = file;
    this.bodyIsJson = false;
    this.bodySet = true;
    this.version++;
  }

  /** Sets the body: strings and buffers as they are, any other value JSON-encoded. */
  setBody(value: unknown): void {
    this.bodyFile = null;
    if (value === null || value === undefined) {
      this.budget?.chargeOther(RESPONSE_BODY, null);
      this.bodyValue = null;
      this.bodyIsJson = false;
    } else if (typeof value === 'string' || Buffer.isBuffer(value)) {
      this.budget?.chargeOther(RESPONSE_BODY, value);
      this.bodyValue = value;
      this.bodyIsJson = false;
    } else {
      const json = JSON.stringify(value);
      this.budget?.chargeOther(RESPONSE_BODY, json);
      this.bodyValue = json;
      this.bodyIsJson = true;
    }
    this.bodySet = true;
    this.version++;
  }

  /** Sets the body to JSON text made elsewhere (a custom directive's value, encoded in its isolate). */
  setJsonBody(json: string): void {
    this.bodyFile = null;
    this.budget?.chargeOther(RESPONSE_BODY, json);
    this.bodyValue = json;
    this.bodyIsJson = true;
    this.bodySet = true;
    this.version++;
  }

  /** Becomes an upstream's response (Http): its status, all its headers, its body. */
  becomeResponse(status: number, headers: Record<string, HeaderValue>, body: Buffer | null): void {
    this.replaceHeaders(headers);
    this.budget?.chargeOther(RESPONSE_BODY, body);
    this.bodyFile = null;
    this.statusValue = status;
    this.bodyValue = body;
    this.bodyIsJson = false;
    this.bodySet = true;
    this.version++;
  }

  /** Sets status, JSON body and content-type in one step (used by Ping, OnError, …). */
  respondJson(status: number, value: unknown): void {
    this.status = status;
    this.storeHeader('content-type', 'application/json; charset=utf-8');
    this.setBody(value);
  }

  bodyText(): string | null {
    const body = this.body;
    if (body === null) return null;
    return typeof body === 'string' ? body : body.toString('utf8');
  }

  /**
   * The body parsed as JSON, or null when it is empty or not JSON. Cached per body value. A body
   * nested deeper than the limit throws (400) before it is parsed.
   */
  bodyJson(): unknown {
    const body = this.body;
    if (this.jsonCache !== null && this.jsonCache.source === body) return this.jsonCache.value;
    let value: unknown = null;
    const text = this.bodyText();
    if (text !== null && text.length > 0) {
      if (isNestedDeeperThan(text, this.maxJsonDepth)) throw Errors.jsonTooDeep(this.maxJsonDepth);
      try {
        value = JSON.parse(text);
      } catch {
        value = null;
      }
    }
    this.jsonCache = { source: body, value };
    return value;
  }

  snapshot(): MessageSnapshot {
    const body = this.body;
    return {
      verb: this.verb,
      path: this.path,
      query: this.queryString,
      headers: { ...this.headerTable() },
      responseHeaders: [...this.responseHeaderNames],
      body: body === null ? null : Buffer.isBuffer(body) ? body.toString('base64') : body,
      bodyBase64: Buffer.isBuffer(body),
      bodySet: this.bodySet,
      bodyIsJson: this.bodyIsJson,
      status: this.statusValue,
    };
  }

  static restore(snapshot: MessageSnapshot, maxJsonDepth = DEFAULT_MAX_JSON_DEPTH): Message {
    const message = new Message(
      { verb: snapshot.verb, path: snapshot.path, rawQuery: snapshot.query, rawHeaders: [], body: null },
      maxJsonDepth,
    );
    message.headerMap = Object.assign(ownKeysOnly<HeaderValue>(), snapshot.headers);
    message.responseHeaderNames = new Set(snapshot.responseHeaders);
    message.bodyValue =
      snapshot.body === null ? null : snapshot.bodyBase64 ? Buffer.from(snapshot.body, 'base64') : snapshot.body;
    message.bodySet = snapshot.bodySet;
    message.bodyIsJson = snapshot.bodyIsJson;
    message.statusValue = snapshot.status;
    return message;
  }

  /** The response; a file body stays a file unless `readFile` (an answer that does not go to a client). */
  toResponse(readFile = false): OutgoingResponse {
    const headers: string[] = [];
    const table = this.headerTable();
    for (const name of this.responseHeaderNames) {
      const value = table[name];
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value) headers.push(name, v);
      else headers.push(name, value);
    }
    const file = this.bodySet && !readFile ? this.bodyFile : null;
    const body = !this.bodySet ? null : file === null ? this.body : null;
    if ((body !== null || file !== null) && !this.responseHeaderNames.has('content-type')) {
      headers.push('content-type', this.bodyIsJson ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8');
    }
    return file === null
      ? { status: this.statusValue, headers, body }
      : { status: this.statusValue, headers, body: null, file };
  }

  private headerTable(): Record<string, HeaderValue> {
    if (this.headerMap === null) {
      const table = ownKeysOnly<HeaderValue>();
      const raw = this.rawHeaders ?? [];
      for (let i = 0; i + 1 < raw.length; i += 2) {
        const name = raw[i]!.toLowerCase();
        const value = raw[i + 1]!;
        const existing = table[name];
        if (existing === undefined) table[name] = value;
        else if (name === 'set-cookie')
          table[name] = Array.isArray(existing) ? [...existing, value] : [existing, value];
        else table[name] = `${existing}, ${value}`;
      }
      this.headerMap = table;
    }
    return this.headerMap;
  }
}

/** A table of names a client chose (headers, query): no prototype, so `__proto__` or `constructor` are plain names. */
function ownKeysOnly<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

function checkHeader(name: string, value: HeaderValue): void {
  const problem = headerProblem(name, value);
  if (problem !== null) throw Errors.invalidHeader(problem);
}

function parseQuery(raw: string): Record<string, QueryValue> {
  const out = ownKeysOnly<QueryValue>();
  if (raw === '') return out;
  for (const [k, v] of new URLSearchParams(raw)) {
    const existing = out[k];
    if (existing === undefined) out[k] = v;
    else out[k] = Array.isArray(existing) ? [...existing, v] : [existing, v];
  }
  return out;
}
