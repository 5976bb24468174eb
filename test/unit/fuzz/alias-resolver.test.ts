import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileAlias, type ResolveScope } from '../../../src/engine/resolve.js';
import { Memory } from '../../../src/engine/memory.js';
import { Message } from '../../../src/engine/message.js';
import { AnvilError } from '../../../src/shared/errors.js';
import { FUZZ_TEST_TIMEOUT_MS, fuzzParameters } from '../../helpers/fuzz-budget.js';

// The alias resolver (SPEC §5) on random paths over random messages, memory and maps: a value is
// read only from the data's own keys (never `__proto__`, `constructor`, `toString` of a prototype),
// anything missing is null, and the only error is the documented one (a JSON body nested too deep).

/** Names a careless lookup would find on every object. */
const PROTOTYPE_NAMES = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'prototype',
  'length',
  'isPrototypeOf',
  '__defineGetter__',
];
const name = fc.oneof(
  fc.constantFrom(...PROTOTYPE_NAMES, 'a', 'b', 'id', '0', 'x-y', 'set-cookie', 'Content-Type'),
  fc.string({ minLength: 1, maxLength: 6 }).filter((s) => !s.includes('.')),
);

/** JSON-like data whose keys are often prototype names; built with Object.fromEntries, so `__proto__` is an own key. */
const data = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 5 })),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.array(fc.tuple(name, tie('value')), { maxLength: 4 }).map((entries) => Object.fromEntries(entries)),
  ),
})).value;
const record = fc
  .array(fc.tuple(name, data), { maxLength: 5 })
  .map((entries) => Object.fromEntries(entries) as Record<string, unknown>);

/** Reads a path the way SPEC §5 says: own keys only, null when missing. */
function ownPath(root: unknown, parts: readonly string[]): unknown {
  let node = root;
  for (const key of parts) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return null;
    node = (node as Record<string, unknown>)[key];
  }
  return node === undefined ? null : node;
}

function headerModel(raw: readonly string[], wanted: string): unknown {
  const values = raw.filter((_, i) => i % 2 === 1 && raw[i - 1]!.toLowerCase() === wanted);
  if (values.length === 0) return null;
  if (wanted === 'set-cookie' && values.length > 1) return values;
  return values.join(', ');
}

function queryModel(rawQuery: string, wanted: string): unknown {
  const values = [...new URLSearchParams(rawQuery)].filter(([k]) => k === wanted).map(([, v]) => v);
  return values.length === 0 ? null : values.length === 1 ? values[0] : values;
}

const scope = fc.record({
  memory: record,
  maps: fc
    .array(fc.tuple(name, data), { maxLength: 3 })
    .map((entries) => Object.fromEntries(entries) as Record<string, unknown>),
  pathParams: fc
    .array(fc.tuple(name, fc.string({ maxLength: 4 })), { maxLength: 3 })
    .map((entries) => Object.fromEntries(entries) as Record<string, string>),
  headers: fc.array(fc.tuple(name, fc.string({ maxLength: 6 })), { maxLength: 5 }),
  query: fc.array(fc.tuple(name, fc.string({ maxLength: 4 })), { maxLength: 4 }),
  body: fc.oneof(
    fc.constant(null),
    data.map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 20 }),
    fc.integer({ min: 60, max: 200 }).map((n) => '['.repeat(n)),
  ),
});
type ScopeInput = typeof scope extends fc.Arbitrary<infer T> ? T : never;

const path = fc.array(name, { minLength: 1, maxLength: 4 });
const alias = fc.oneof(
  path.map((p) => ({ text: `$.memory.${p.join('.')}`, want: (s: ScopeInput) => ownPath(s.memory, p) })),
  fc.tuple(name, fc.array(name, { maxLength: 3 })).map(([map, p]) => ({
    text: `$.map.${[map, ...p].join('.')}`,
    want: (s: ScopeInput) => ownPath(s.maps, [map, ...p]),
  })),
  path.map((p) => ({
    text: `$.message.body.${p.join('.')}`,
    want: (s: ScopeInput) => ownPath(parseOrNull(s.body), p),
  })),
  fc.array(name, { maxLength: 3 }).map((p) => ({
    text: ['$.message.bodyAsArray', ...p].join('.'),
    want: (s: ScopeInput) => ownPath(parseOrNull(s.body), p),
  })),
  name.map((n) => ({
    text: `$.message.header.${n}`,
    want: (s: ScopeInput) => headerModel(s.headers.flat(), n.toLowerCase()),
  })),
  name.map((n) => ({ text: `$.message.query.${n}`, want: (s: ScopeInput) => queryModel(rawQuery(s.query), n) })),
  name.map((n) => ({ text: `$.message.pathParam.${n}`, want: (s: ScopeInput) => ownPath(s.pathParams, [n]) })),
);

function parseOrNull(body: string | null): unknown {
  try {
    return body === null ? null : JSON.parse(body);
  } catch {
    return null;
  }
}

function rawQuery(pairs: ReadonlyArray<[string, string]>): string {
  return pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

function build(input: ScopeInput): ResolveScope {
  const message = new Message({
    verb: 'POST',
    path: '/x',
    rawQuery: rawQuery(input.query),
    rawHeaders: input.headers.flat(),
    body: input.body === null ? null : Buffer.from(input.body),
  });
  return { id: 'req-1', message, memory: new Memory(input.memory), maps: input.maps, pathParams: input.pathParams };
}

describe('the alias resolver on random paths and data', () => {
  it(
    'reads own keys only, gives null for anything missing, and throws only the documented errors',
    () => {
      fc.assert(
        fc.property(scope, alias, (input, { text, want }) => {
          let got: unknown;
          try {
            got = compileAlias(text)(build(input));
          } catch (error) {
            // The one documented error: a JSON body nested deeper than the limit is a 400.
            expect(error).toBeInstanceOf(AnvilError);
            expect((error as AnvilError).code).toBe('ANVIL_ERR_JSON_TOO_DEEP');
            expect(text.startsWith('$.message.body')).toBe(true);
            return;
          }
          expect(got, text).toEqual(want(input));
          expect(got, text).not.toBeUndefined();
          expect(typeof got, text).not.toBe('function');
          expect([Object.prototype, Array.prototype, Function.prototype], text).not.toContain(got);
        }),
        fuzzParameters(5000),
      );
    },
    FUZZ_TEST_TIMEOUT_MS,
  );

  it(
    'memory written by dotted paths reads back what was written, and nothing of a prototype',
    () => {
      const writes = fc.array(fc.tuple(path, data), { minLength: 1, maxLength: 6 });
      fc.assert(
        fc.property(record, writes, path, (initial, sets, probe) => {
          const memory = new Memory(initial);
          const model = structuredClone(initial);
          for (const [p, value] of sets) {
            memory.set(p, value);
            setModel(model, p, structuredClone(value));
          }
          expect(memory.get(sets[sets.length - 1]![0])).toEqual(sets[sets.length - 1]![1] ?? null);
          expect(memory.get(probe)).toEqual(ownPath(model, probe));
          expect(Object.getPrototypeOf(Object.prototype)).toBeNull();
          expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        }),
        fuzzParameters(3000),
      );
    },
    FUZZ_TEST_TIMEOUT_MS,
  );
});

/** What Memory.set does, on plain own properties: objects on the way replace anything that is not one. */
function setModel(root: Record<string, unknown>, parts: readonly string[], value: unknown): void {
  let node = root;
  for (const key of parts.slice(0, -1)) {
    const next = Object.hasOwn(node, key) ? node[key] : undefined;
    if (next === null || typeof next !== 'object' || Array.isArray(next))
      Object.defineProperty(node, key, { value: {}, enumerable: true, writable: true, configurable: true });
    node = node[key] as Record<string, unknown>;
  }
  Object.defineProperty(node, parts[parts.length - 1]!, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}
