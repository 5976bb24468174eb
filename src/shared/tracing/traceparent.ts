/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): reading the `traceparent` and
 * `tracestate` a request carries, and writing them. No OpenTelemetry here: this is also what passes
 * a client's trace context on unchanged when tracing is off.
 */

/** A valid `traceparent`, and the `tracestate` that goes with it (undefined: none or invalid). */
export interface TraceParent {
  traceId: string;
  spanId: string;
  /** The trace-flags byte (bit 0: sampled). */
  flags: number;
  tracestate: string | undefined;
}

const TRACEPARENT = 'traceparent';
const TRACESTATE = 'tracestate';
const VERSION_00_LENGTH = 55;
const HEX_FIELD = /^[0-9a-f]+$/;
const ALL_ZERO = /^0+$/;
const MAX_TRACESTATE_MEMBERS = 32;
const TRACESTATE_KEY = /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})$/;
const TRACESTATE_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/**
 * The trace context of a request's headers (flat [name, value, …]), or null when it has no valid
 * `traceparent`: absent, malformed, all-zero ids, version ff, or sent more than once with different
 * values. A `tracestate` is kept only when its `traceparent` is valid and it is well formed itself.
 */
export function findTraceParent(rawHeaders: readonly string[]): TraceParent | null {
  let parentValue: string | undefined;
  let stateParts: string[] | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === TRACEPARENT.length && name.toLowerCase() === TRACEPARENT) {
      const value = rawHeaders[i + 1]!;
      if (parentValue !== undefined && parentValue !== value) return null;
      parentValue = value;
    } else if (name.length === TRACESTATE.length && name.toLowerCase() === TRACESTATE) {
      (stateParts ??= []).push(rawHeaders[i + 1]!);
    }
  }
  if (parentValue === undefined) return null;
  const parent = parseTraceparent(parentValue);
  if (parent === null) return null;
  parent.tracestate = stateParts === undefined ? undefined : validTracestate(stateParts.join(','));
  return parent;
}

/** `00-<trace id>-<span id>-<flags>` parsed, or null when it is not a valid traceparent. */
export function parseTraceparent(value: string): TraceParent | null {
  const text = value.trim();
  if (text.length < VERSION_00_LENGTH) return null;
  const version = text.slice(0, 2);
  if (!HEX_FIELD.test(version) || version === 'ff') return null;
  // Version 00 is exactly 55 characters; a later version may append fields after a dash.
  if (
    version === '00'
      ? text.length !== VERSION_00_LENGTH
      : text.length > VERSION_00_LENGTH && text[VERSION_00_LENGTH] !== '-'
  )
    return null;
  if (text[2] !== '-' || text[35] !== '-' || text[52] !== '-') return null;
  const traceId = text.slice(3, 35);
  const spanId = text.slice(36, 52);
  const flags = text.slice(53, 55);
  if (!HEX_FIELD.test(traceId) || !HEX_FIELD.test(spanId) || !HEX_FIELD.test(flags)) return null;
  if (ALL_ZERO.test(traceId) || ALL_ZERO.test(spanId)) return null;
  return { traceId, spanId, flags: parseInt(flags, 16), tracestate: undefined };
}

/** The version-00 header naming `spanId` of trace `traceId` as the parent. */
export function formatTraceparent(traceId: string, spanId: string, flags: number): string {
  return `00-${traceId}-${spanId}-${(flags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The tracestate list when every member is well formed and no key repeats (empty members dropped), else undefined. */
export function validTracestate(list: string): string | undefined {
  const members: string[] = [];
  const keys = new Set<string>();
  for (const part of list.split(',')) {
    const member = part.trim();
    if (member === '') continue;
    const equals = member.indexOf('=');
    if (equals < 1) return undefined;
    const key = member.slice(0, equals);
    if (!TRACESTATE_KEY.test(key) || !TRACESTATE_VALUE.test(member.slice(equals + 1)) || keys.has(key))
      return undefined;
    keys.add(key);
    members.push(member);
  }
  if (members.length === 0 || members.length > MAX_TRACESTATE_MEMBERS) return undefined;
  return members.join(',');
}
