import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { bootstrapSnapshot } from '../../src/cell/sandbox-host/bootstrap-snapshot.js';
import { BridgeOp, type BridgeOpCode } from '../../src/cell/sandbox-host/bridge-ops.js';
import { ContextParts, SandboxContext, type ContextShape } from '../../src/cell/sandbox-host/sandbox-context.js';
import { SandboxSpares } from '../../src/cell/sandbox-host/sandbox-spares.js';

// A shared thread's spare contexts, with real isolates: made ahead of need, each given to one
// sandbox only, and what runs in it reaches that sandbox's host function alone.

const bootstrap = bootstrapSnapshot();
const shape = (memoryMb = 32): ContextShape => ({
  memoryMb,
  valueMaxBytes: memoryMb * 2 ** 20,
  snapshot: bootstrap.blob,
  lockdown: bootstrap.lockdown,
});
/** A directive that writes its body and keeps a counter in a global. */
const COUNTER = `var __anvilDirective = { default: (state) => { globalThis.calls = (globalThis.calls ?? 0) + 1; state.message.body = { calls: globalThis.calls }; } };`;

let spares: SandboxSpares;
const made: SandboxContext[] = [];
afterEach(() => {
  spares?.close();
  for (const box of made.splice(0)) box.dispose();
});

async function ready(memoryMb = 32): Promise<NonNullable<ReturnType<SandboxSpares['take']>>> {
  for (let i = 0; i < 200; i++) {
    await sleep(10);
    const spare = spares.take(shape(memoryMb));
    if (spare !== null) return spare;
  }
  throw new Error('no spare was made within 2 s');
}

/** A sandbox on `parts` whose host records the bodies its calls set: [what it saw]. */
function sandboxOn(
  parts: ReturnType<SandboxSpares['take']>,
  memoryMb = 32,
): { box: SandboxContext; bodies: unknown[] } {
  const bodies: unknown[] = [];
  const host = (op: BridgeOpCode, _callId: number, a: unknown, b: unknown) => {
    if (op === BridgeOp.messageSet) bodies.push(a === 'bodyJson' ? JSON.parse(String(b)) : b);
    return undefined;
  };
  const box = new SandboxContext({ ...shape(memoryMb), host, enter: () => {} }, parts ?? undefined);
  made.push(box);
  expect(box.load('Counter', COUNTER, 1_000)).toBeNull();
  return { box, bodies };
}

describe('spare sandbox contexts (src/cell/sandbox-host/sandbox-spares.ts)', () => {
  it('has none before a sandbox asked, then one made like it', async () => {
    spares = new SandboxSpares();
    expect(spares.take(shape())).toBeNull();
    const spare = await ready();
    expect(spare.shape.memoryMb).toBe(32);
  });

  it('makes the first spare before any sandbox asks when told what to expect, and the first sandbox takes it', async () => {
    spares = new SandboxSpares();
    spares.expect(shape(48));
    // Nothing has been taken yet: the spare is being made, like the shape expected.
    expect(spares.comingFor(shape(48), 2_000)).not.toBeNull();
    await spares.comingFor(shape(48), 2_000);
    const spare = spares.take(shape(48));
    expect(spare).not.toBeNull();
    expect(spare!.shape.memoryMb).toBe(48);
    const { box, bodies } = sandboxOn(spare, 48);
    box.call(1, 'Counter', '{}', 'r1', 1_000);
    expect(bodies).toEqual([{ calls: 1 }]);
  });

  it('tells a sandbox when the spare being made is ready, so that it need not make one beside it', async () => {
    spares = new SandboxSpares();
    expect(spares.comingFor(shape(), 1_000)).toBeNull();
    expect(spares.take(shape())).toBeNull();
    const coming = spares.comingFor(shape(), 2_000);
    expect(coming).not.toBeNull();
    // Not for another limit: that one is not being made.
    expect(spares.comingFor(shape(16), 1_000)).toBeNull();
    await coming;
    expect(spares.take(shape())).not.toBeNull();
  });

  it('gives each spare to one sandbox only, and a sandbox on it starts with nothing of another', async () => {
    spares = new SandboxSpares();
    spares.take(shape());
    const first = sandboxOn(await ready());
    first.box.call(1, 'Counter', '{}', 'r1', 1_000);
    first.box.call(2, 'Counter', '{}', 'r2', 1_000);
    const secondParts = await ready();
    expect(secondParts.isolate).not.toBe(first.box.isolate);
    const second = sandboxOn(secondParts);
    second.box.call(1, 'Counter', '{}', 'r1', 1_000);
    // Each host saw its own sandbox's calls only, and the second's global started at nothing.
    expect(first.bodies).toEqual([{ calls: 1 }, { calls: 2 }]);
    expect(second.bodies).toEqual([{ calls: 1 }]);
    expect(() => new SandboxContext({ ...shape(), host: () => undefined, enter: () => {} }, secondParts)).toThrow(
      /taken once/,
    );
  });

  it('does not give a spare made for another memory limit: the next one is made like the last asked for', async () => {
    spares = new SandboxSpares();
    spares.take(shape(32));
    await ready(32);
    await sleep(50);
    expect(spares.take(shape(16))).toBeNull();
    const spare = await ready(16);
    expect(spare.shape.memoryMb).toBe(16);
    spare.dispose();
  });

  it('warms a context without its host and leaves nothing of it: the first call sees a fresh context', async () => {
    // Made and warmed as a spare is, past where V8 optimizes the warmed code; its host refuses
    // every operation until a sandbox takes it, so a warm-up that asked the host would fail here.
    const parts = await ContextParts.prepare(shape());
    await parts.warm(1_500);
    const { box, bodies } = sandboxOn(parts);
    box.call(1, 'Counter', '{}', 'r1', 1_000);
    box.call(2, 'Counter', '{}', 'r2', 1_000);
    expect(bodies).toEqual([{ calls: 1 }, { calls: 2 }]);
  });
});
