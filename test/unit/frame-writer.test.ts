/**
 * FrameWriter batches frames; a frame written as a head and a body apart (writeFrame) leaves with
 * its body as it was given, never copied into a new buffer: its batch is written corked (one
 * writev), not joined. A batch of whole frames is joined, as before. Checked here against a
 * stand-in socket that records what it is handed.
 */
import type { Socket } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bodySize,
  envelopeHead,
  FrameReader,
  FrameType,
  FrameWriter,
  REQUEST_PATH_WRITE_AT_ONCE,
  u32Frame,
  type BodyBytes,
} from '../../src/shared/protocol/frames.js';

/** What a socket was handed: each write, and whether it came between cork and uncork. */
class RecordingSocket {
  destroyed = false;
  writes: Array<{ buffer: Buffer; corked: boolean }> = [];
  private corked = 0;

  write(buffer: Buffer): boolean {
    this.writes.push({ buffer, corked: this.corked > 0 });
    return true;
  }

  cork(): void {
    this.corked++;
  }

  uncork(): void {
    this.corked--;
  }

  get bytes(): Buffer {
    return Buffer.concat(this.writes.map((w) => w.buffer));
  }
}

function writerOn(writeAtOnce?: number): { socket: RecordingSocket; writer: FrameWriter } {
  const socket = new RecordingSocket();
  return { socket, writer: new FrameWriter(socket as unknown as Socket, writeAtOnce) };
}

const head = (number: number, body: BodyBytes): Buffer =>
  envelopeHead(FrameType.Request, number, 0, ['m'], bodySize(body));

describe('FrameWriter.writeFrame (a body written as it is)', () => {
  it('hands the body buffers themselves to the socket, corked, in order, after their head', () => {
    const { socket, writer } = writerOn();
    const body = Buffer.from('a body');
    const chunks = [Buffer.from('chunk one, '), Buffer.from('chunk two')];
    const heads = [head(1, body), head(2, chunks), head(3, null)];
    writer.writeFrame(heads[0]!, body);
    writer.writeFrame(heads[1]!, chunks);
    writer.writeFrame(heads[2]!, null);
    writer.write(u32Frame(FrameType.Pong, 4));
    // The fourth frame makes a batch: written at once.
    expect(socket.writes.map((w) => w.buffer)).toEqual([
      heads[0],
      body,
      heads[1],
      chunks[0],
      chunks[1],
      heads[2],
      u32Frame(FrameType.Pong, 4),
    ]);
    expect(socket.writes[1]!.buffer).toBe(body);
    expect(socket.writes[3]!.buffer).toBe(chunks[0]);
    expect(socket.writes.every((w) => w.corked)).toBe(true);
  });

  it('writes a lone frame as it is, uncorked, at the end of the turn', async () => {
    const { socket, writer } = writerOn();
    const frame = u32Frame(FrameType.Ping, 1);
    writer.write(frame);
    expect(socket.writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(socket.writes).toEqual([{ buffer: frame, corked: false }]);
  });

  it('skips an empty body; counts frames, not buffers, for a batch', () => {
    const { socket, writer } = writerOn();
    for (let n = 1; n <= 3; n++)
      writer.writeFrame(head(n, [Buffer.from('x'), Buffer.from('y')]), [Buffer.from('x'), Buffer.from('y')]);
    expect(socket.writes).toEqual([]);
    writer.writeFrame(head(4, Buffer.alloc(0)), Buffer.alloc(0));
    expect(socket.writes).toHaveLength(3 * 3 + 1);
  });

  it('joins a batch of whole frames and bodiless heads into one write', () => {
    const { socket, writer } = writerOn();
    const frames = [u32Frame(FrameType.Pong, 1), head(2, null), head(3, []), u32Frame(FrameType.Pong, 4)];
    writer.write(frames[0]!);
    writer.writeFrame(frames[1]!, null);
    writer.writeFrame(frames[2]!, []);
    writer.write(frames[3]!);
    expect(socket.writes).toEqual([{ buffer: Buffer.concat(frames), corked: false }]);
  });

  it('writes a frame asked for now at once, after what was queued before it', () => {
    const { socket, writer } = writerOn(16);
    const queued = u32Frame(FrameType.Pong, 1);
    const urgent = head(2, null);
    writer.write(queued);
    expect(socket.writes).toEqual([]);
    writer.writeFrame(urgent, null, true);
    expect(socket.writes).toEqual([{ buffer: Buffer.concat([queued, urgent]), corked: false }]);
  });

  it('batches as many frames as it was made to (the request path: REQUEST_PATH_WRITE_AT_ONCE)', async () => {
    const { socket, writer } = writerOn(REQUEST_PATH_WRITE_AT_ONCE);
    const frames = Array.from({ length: REQUEST_PATH_WRITE_AT_ONCE + 1 }, (_, i) => u32Frame(FrameType.Pong, i));
    frames.slice(0, -1).forEach((frame, i) => {
      expect(socket.writes).toHaveLength(0);
      writer.write(frame);
      if (i < REQUEST_PATH_WRITE_AT_ONCE - 1) expect(socket.writes).toHaveLength(0);
    });
    expect(socket.writes).toEqual([{ buffer: Buffer.concat(frames.slice(0, -1)), corked: false }]);
    writer.write(frames.at(-1)!);
    await new Promise((resolve) => setImmediate(resolve));
    expect(socket.writes.map((w) => w.buffer)).toEqual([Buffer.concat(frames.slice(0, -1)), frames.at(-1)]);
  });

  it('the bytes written read back as the frames, whatever the bodies', () => {
    const body: fc.Arbitrary<BodyBytes> = fc.oneof(
      fc.constant(null),
      fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
      fc.array(
        fc.uint8Array({ maxLength: 100 }).map((a) => Buffer.from(a)),
        { maxLength: 4 },
      ),
    );
    fc.assert(
      fc.property(fc.array(body, { maxLength: 9 }), (bodies) => {
        const { socket, writer } = writerOn();
        bodies.forEach((b, i) => writer.writeFrame(head(i + 1, b), b));
        writer.flushNow();
        const read: Array<{ number: number; body: Buffer }> = [];
        new FrameReader((_type, payload) =>
          read.push({
            number: payload.readUInt32LE(0),
            body: Buffer.from(payload.subarray(payload.length - bodySize(bodies[read.length]!))),
          }),
        ).push(socket.bytes);
        expect(read).toEqual(
          bodies.map((b, i) => ({
            number: i + 1,
            body: b === null ? Buffer.alloc(0) : Buffer.isBuffer(b) ? b : Buffer.concat(b),
          })),
        );
      }),
    );
  });
});
