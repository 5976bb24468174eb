/**
 * A shared thread's actors share one connection to the router, a channel each (Channel frames):
 * over a real Unix socket, a ThreadServer (the router's end) and a SharedConnection (the thread's).
 * Each channel is greeted by its own hello, its frames reach only its own handler both ways, an End
 * closes only its channel, and the socket closing closes them all. A channel that does not start
 * with a good hello closes the whole connection.
 */
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SharedConnection } from '../../src/cell/actors/router-line.js';
import { dial } from '../../src/cell/actors/thread-actor.js';
import { emptyFrame, FrameType, u32Frame } from '../../src/shared/protocol/frames.js';
import { encodeHello, WIRE_VERSION, type ThreadHello } from '../../src/shared/protocol/hello.js';
import type { Conduit } from '../../src/shared/protocol/thread-channels.js';
import { ThreadServer } from '../../src/shared/protocol/thread-server.js';

const TOKEN = 'channel-test-token';
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

interface Arrival {
  hello: ThreadHello;
  conduit: Conduit;
  frames: Array<[number, number]>;
  closed: boolean;
}

async function router(): Promise<{ path: string; arrivals: Arrival[]; wrongVersions: ThreadHello[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'anvil-channels-'));
  const path = join(dir, 'router.sock');
  const arrivals: Arrival[] = [];
  const wrongVersions: ThreadHello[] = [];
  const server = new ThreadServer(
    path,
    TOKEN,
    (hello) => wrongVersions.push(hello),
    (hello, conduit, reader) => {
      const arrival: Arrival = { hello, conduit, frames: [], closed: false };
      reader.replace((type, payload) =>
        arrival.frames.push([type, payload.length >= 4 ? payload.readUInt32LE(0) : -1]),
      );
      conduit.onClose(() => (arrival.closed = true));
      arrivals.push(arrival);
    },
  );
  await server.listen();
  cleanups.push(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { path, arrivals, wrongVersions };
}

const hello = (actor: string, extra: Partial<ThreadHello> = {}): Buffer =>
  encodeHello({ version: WIRE_VERSION, token: TOKEN, cell: 0, actor, thread: 3, ...extra });

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(check()).toBe(true);
}

function sharedConnection(path: string): { connection: SharedConnection; destroy: () => void } {
  const socket = dial({ socketPath: path, token: TOKEN, cell: 0 } as Parameters<typeof dial>[0]);
  cleanups.push(() => socket.destroy());
  return { connection: new SharedConnection(socket), destroy: () => socket.destroy() };
}

describe('a shared thread connection', () => {
  it('greets each channel by its hello and keeps the channels apart both ways', async () => {
    const { path, arrivals } = await router();
    const { connection } = sharedConnection(path);
    const got: Record<string, Array<[number, number]>> = { alpha: [], beta: [] };
    const lines = { alpha: connection.line(), beta: connection.line() };
    for (const name of ['alpha', 'beta'] as const) {
      lines[name].listen(
        (type, payload) => got[name]!.push([type, payload.readUInt32LE(0)]),
        () => {},
      );
      lines[name].writer.write(hello(name));
    }
    await until(() => arrivals.length === 2);
    expect(arrivals.map((a) => a.hello.actor)).toEqual(['alpha', 'beta']);

    lines.alpha.writer.write(u32Frame(FrameType.Response, 11));
    lines.beta.writer.write(u32Frame(FrameType.Response, 22));
    lines.beta.writer.write(u32Frame(FrameType.Response, 23));
    await until(() => arrivals[0]!.frames.length === 1 && arrivals[1]!.frames.length === 2);
    expect(arrivals[0]!.frames).toEqual([[FrameType.Response, 11]]);
    expect(arrivals[1]!.frames).toEqual([
      [FrameType.Response, 22],
      [FrameType.Response, 23],
    ]);

    arrivals[1]!.conduit.writer.write(u32Frame(FrameType.Request, 7));
    arrivals[0]!.conduit.writer.write(u32Frame(FrameType.Request, 5));
    await until(() => got.alpha!.length === 1 && got.beta!.length === 1);
    expect(got).toEqual({ alpha: [[FrameType.Request, 5]], beta: [[FrameType.Request, 7]] });
  });

  it('closes one channel at its End, and every channel when the socket closes', async () => {
    const { path, arrivals } = await router();
    const { connection, destroy } = sharedConnection(path);
    const closedAtThread: string[] = [];
    const lines = [connection.line(), connection.line(), connection.line()];
    lines.forEach((line, i) => {
      line.listen(
        () => {},
        () => closedAtThread.push(`actor-${i}`),
      );
      line.writer.write(hello(`actor-${i}`));
    });
    await until(() => arrivals.length === 3);
    let ended = false;
    lines[0]!.end(() => (ended = true));
    expect(ended).toBe(true);
    await until(() => arrivals[0]!.closed);
    expect(arrivals.map((a) => a.closed)).toEqual([true, false, false]);
    // A new channel on the same connection after one ended.
    const late = connection.line();
    late.listen(
      () => {},
      () => closedAtThread.push('late'),
    );
    late.writer.write(hello('late'));
    await until(() => arrivals.length === 4);
    destroy();
    await until(() => arrivals.every((a) => a.closed));
    await until(() => closedAtThread.length === 3);
    expect(closedAtThread.sort()).toEqual(['actor-1', 'actor-2', 'late']);
  });

  it('refuses the whole connection when a channel starts with anything but a good hello', async () => {
    const { path, arrivals, wrongVersions } = await router();
    const cases: Array<[string, Buffer]> = [
      ['no hello', emptyFrame(FrameType.Pong)],
      ['a wrong token', hello('x', { token: 'not-the-token' })],
      ['another wire version', hello('y', { version: WIRE_VERSION + 1 })],
    ];
    for (const [, first] of cases) {
      const { connection } = sharedConnection(path);
      const good = connection.line();
      let goodClosed = false;
      good.listen(
        () => {},
        () => (goodClosed = true),
      );
      good.writer.write(hello('good'));
      const bad = connection.line();
      bad.listen(
        () => {},
        () => {},
      );
      bad.writer.write(first);
      await until(() => goodClosed);
    }
    expect(arrivals.filter((a) => a.hello.actor === 'good').every((a) => a.closed)).toBe(true);
    expect(wrongVersions.map((h) => h.actor)).toEqual(['y']);
  });

  it('still takes an actor on a socket of its own (a dedicated thread)', async () => {
    const { path, arrivals } = await router();
    const socket = connect(path);
    cleanups.push(() => socket.destroy());
    socket.write(Buffer.concat([hello(''), hello('solo'), u32Frame(FrameType.Response, 9)]));
    await until(() => arrivals.length === 1 && arrivals[0]!.frames.length === 1);
    expect(arrivals[0]!.hello.actor).toBe('solo');
    expect(arrivals[0]!.frames).toEqual([[FrameType.Response, 9]]);
  });
});
