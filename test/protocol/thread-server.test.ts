import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { jsonFrame, FrameType } from '../../src/shared/protocol/frames.js';
import { encodeHello, WIRE_VERSION, type ThreadHello } from '../../src/shared/protocol/hello.js';
import { ThreadServer } from '../../src/shared/protocol/thread-server.js';
import { useTempDir } from '../helpers/temp-dir.js';

const dir = useTempDir('anvil-thread-server-');
const TOKEN = 'cell-token';
let server: ThreadServer | undefined;
const clients: Socket[] = [];

afterEach(() => {
  for (const client of clients.splice(0)) client.destroy();
  server?.close();
});

/** A server that records who it took and who it refused for their wire version. */
async function listening(): Promise<{ path: string; arrived: ThreadHello[]; refused: ThreadHello[] }> {
  const path = join(dir.path(), 'router.sock');
  const arrived: ThreadHello[] = [];
  const refused: ThreadHello[] = [];
  server = new ThreadServer(
    path,
    TOKEN,
    (hello) => refused.push(hello),
    (hello) => arrived.push(hello),
  );
  await server.listen();
  return { path, arrived, refused };
}

/** Dials, sends `frame`, and resolves to whether the server closed the connection within `ms`. */
async function closedAfter(path: string, frame: Buffer, ms = 300): Promise<boolean> {
  const client = connect(path);
  clients.push(client);
  client.on('error', () => {});
  await once(client, 'connect');
  client.write(frame);
  const closed = once(client, 'close').then(() => true);
  return Promise.race([closed, new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);
}

const hello = (over: Partial<ThreadHello> = {}): ThreadHello => ({
  version: WIRE_VERSION,
  token: TOKEN,
  cell: 2,
  actor: 'h/e/k@1',
  thread: 0,
  ...over,
});

describe('ThreadServer (the hello a thread opens its connection with)', () => {
  it('takes a thread with the token that speaks this wire version', async () => {
    const { path, arrived, refused } = await listening();
    expect(await closedAfter(path, encodeHello(hello()))).toBe(false);
    expect(arrived).toEqual([hello()]);
    expect(refused).toEqual([]);
  });

  it('refuses, and reports, a thread that speaks another wire version', async () => {
    const { path, arrived, refused } = await listening();
    expect(await closedAfter(path, encodeHello(hello({ version: WIRE_VERSION + 1 })))).toBe(true);
    expect(arrived).toEqual([]);
    expect(refused).toEqual([hello({ version: WIRE_VERSION + 1 })]);
  });

  it('refuses a hello from before wire versions as version 0; a spare (no actor yet) is checked too', async () => {
    const { path, refused } = await listening();
    const { version: _none, ...unversioned } = hello({ actor: '' });
    expect(await closedAfter(path, jsonFrame(FrameType.Hello, unversioned))).toBe(true);
    expect(refused).toEqual([{ ...unversioned, version: 0 }]);
  });

  it('closes without a report on a wrong token or a first frame that is not a hello', async () => {
    const { path, arrived, refused } = await listening();
    expect(await closedAfter(path, encodeHello(hello({ token: 'wrong', version: 99 })))).toBe(true);
    expect(await closedAfter(path, jsonFrame(FrameType.Stats, hello()))).toBe(true);
    expect([arrived, refused]).toEqual([[], []]);
  });
});
