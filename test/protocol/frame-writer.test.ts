import { once } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FrameReader, FrameType, FrameWriter, u32Frame } from '../../src/shared/protocol/frames.js';
import { eventually } from '../helpers/instance.js';
import { useTempDir } from '../helpers/temp-dir.js';

const dir = useTempDir('anvil-frames-');
let server: Server | undefined;
let client: Socket | undefined;

afterEach(() => {
  client?.destroy();
  server?.close();
});

/** A connected Unix socket pair: frames written on `sender` are decoded into `received` on the other end. */
async function socketPair(): Promise<{ sender: Socket; received: number[] }> {
  const path = join(dir.path(), 'frames.sock');
  const received: number[] = [];
  const accepted = new Promise<Socket>((resolve) => {
    server = createServer(resolve);
  });
  server!.listen(path);
  await once(server!, 'listening');
  client = connect(path);
  await once(client, 'connect');
  const peer = await accepted;
  const reader = new FrameReader((_type, payload) => received.push(payload.readUInt32LE(0)));
  peer.on('data', (chunk: Buffer) => reader.push(chunk));
  return { sender: client, received };
}

describe('FrameWriter (frames of one connection, batched)', () => {
  it('holds a few frames until the turn ends, then writes them together and in order', async () => {
    const { sender, received } = await socketPair();
    const writer = new FrameWriter(sender);
    for (const n of [1, 2, 3]) writer.write(u32Frame(FrameType.Pong, n));
    expect(sender.bytesWritten).toBe(0);
    await eventually(() => received.length === 3, 2_000, 5);
    expect(received).toEqual([1, 2, 3]);
  });

  it('writes a burst in parts as it grows, so the other side can start on it before the turn ends', async () => {
    const { sender, received } = await socketPair();
    const writer = new FrameWriter(sender);
    const frameBytes = u32Frame(FrameType.Pong, 0).length;
    for (let n = 1; n <= 4; n++) writer.write(u32Frame(FrameType.Pong, n));
    expect(sender.bytesWritten).toBe(4 * frameBytes);
    for (let n = 5; n <= 10; n++) writer.write(u32Frame(FrameType.Pong, n));
    expect(sender.bytesWritten).toBe(8 * frameBytes);
    await eventually(() => received.length === 10, 2_000, 5);
    expect(received).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });
});
