/** The few request headers the front door needs, read from rawHeaders (cheaper than req.headers). */
export interface RequestHead {
  host: string | undefined;
  hasBody: boolean;
  /** Why the request must be refused with 400 (a repeated singleton header), or null. */
  problem: string | null;
}

/**
 * Headers a request may carry once: Host at most once (RFC 9112 §3.2), the others at most with
 * one value. Readers disagree on repeats — node's req.headers keeps the first Host, Authorization
 * or Content-Type but joins repeated public-host, api-key or x-correlation-id with ", ", and the
 * engine joins them all — so two different values would mean different things to the router and
 * to the API. Node's parser already refuses any repeated Content-Length (HPE_UNEXPECTED_CONTENT_LENGTH,
 * see client-error.ts); it is listed all the same, so this rule does not hang on that one.
 */
const SINGLETONS = [
  'host',
  'content-length',
  'content-type',
  'authorization',
  'public-host',
  'public-host-key',
  'api-key',
  'x-correlation-id',
] as const;
const HOST_SLOT = 0;
const CONTENT_LENGTH_SLOT = 1;
/**
 * Their lengths differ, so a name's length picks the one singleton it could be, and its first letter
 * rules out most others of that length (Sec-Fetch-Mode, Accept-Encoding) before any lower-casing:
 * this runs for every request.
 */
const SLOT_BY_LENGTH: readonly number[] = (() => {
  const slots = new Array<number>(Math.max(...SINGLETONS.map((name) => name.length)) + 1).fill(-1);
  SINGLETONS.forEach((name, slot) => (slots[name.length] = slot));
  return slots;
})();

export function scanRequestHead(raw: string[]): RequestHead {
  let host: string | undefined;
  let hasBody = false;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const slot = name.length < SLOT_BY_LENGTH.length ? SLOT_BY_LENGTH[name.length]! : -1;
    if (slot < 0) {
      if (name.length === 17 && name.toLowerCase() === 'transfer-encoding') hasBody = true;
      continue;
    }
    const singleton = SINGLETONS[slot]!;
    if ((name.charCodeAt(0) | 0x20) !== singleton.charCodeAt(0) || name.toLowerCase() !== singleton) continue;
    const value = raw[i + 1]!;
    const bit = 1 << slot;
    if ((seen & bit) !== 0) {
      const problem = repeatProblem(raw, i, slot);
      if (problem !== null) return { host, hasBody, problem };
      continue;
    }
    seen |= bit;
    if (slot === HOST_SLOT) host = value;
    else if (slot === CONTENT_LENGTH_SLOT) hasBody = value !== '0';
  }
  return { host, hasBody, problem: null };
}

/** A singleton header seen again at `at`: Host always, the others when the value differs from the first. */
function repeatProblem(raw: string[], at: number, slot: number): string | null {
  const name = SINGLETONS[slot]!;
  if (slot === HOST_SLOT) return 'Bad Request: more than one Host header';
  for (let i = 0; i < at; i += 2) {
    if (raw[i]!.length === name.length && raw[i]!.toLowerCase() === name) {
      return raw[i + 1] === raw[at + 1] ? null : `Bad Request: the ${name} header is repeated with different values`;
    }
  }
  return null;
}
