/**
 * FrameReader gets a socket's bytes in whatever chunks the kernel hands over: a stream of several
 * frames must come out as the same frames, in order, however it is cut.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  emptyFrame,
  envelopeFrame,
  FrameReader,
  FrameType,
  jsonFrame,
  u32Frame,
} from '../../src/shared/protocol/frames.js';

interface Frame {
  type: number;
  payload: Buffer;
}

/** The frames a reader emits for `chunks`, pushed one after the other. */
function read(chunks: readonly Buffer[]): Frame[] {
  const frames: Frame[] = [];
  // The payload is a view valid for the current turn: keep a copy.
  const reader = new FrameReader((type, payload) => frames.push({ type, payload: Buffer.from(payload) }));
  for (const chunk of chunks) reader.push(chunk);
  return frames;
}

/**
 * Fails unless `got` are the frames `want`, in order. (Buffer.equals per payload: a deep toEqual
 * of kilobyte buffers, thousands of times, takes seconds.)
 */
function expectFrames(got: readonly Frame[], want: readonly Frame[], how: string): void {
  if (got.length === want.length && got.every((f, i) => f.type === want[i]!.type && f.payload.equals(want[i]!.payload)))
    return;
  const hex = (list: readonly Frame[]) => list.map((f) => `${f.type}:${f.payload.toString('hex')}`);
  expect(hex(got), how).toEqual(hex(want));
}

/** `stream` cut at `cuts` (offsets, in any order, repeats making empty chunks). */
function cut(stream: Buffer, cuts: readonly number[]): Buffer[] {
  const at = [...cuts].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const offset of at) {
    chunks.push(stream.subarray(from, offset));
    from = offset;
  }
  chunks.push(stream.subarray(from));
  return chunks;
}

/** Every kind of frame: empty, one u32, JSON with multi-byte text, an envelope with a body, a body larger than the rest. */
const frames: Buffer[] = [
  emptyFrame(FrameType.Ping),
  u32Frame(FrameType.Retire, 0xfffffffe),
  jsonFrame(FrameType.Hello, { version: 1, token: 'tök€n 🙂', cell: 3, actor: 'h/e/k@1', thread: 0 }),
  envelopeFrame(
    FrameType.Request,
    7,
    0,
    ['id', 'GET', '/ü', '', ['a', 'b'], '127.0.0.1', 0, 0, 1],
    Buffer.from('body'),
  ),
  emptyFrame(FrameType.Pong),
  envelopeFrame(FrameType.Response, 8, 200, [[], ''], Buffer.alloc(3000, 0xab)),
  envelopeFrame(FrameType.CallResult, 9, 404, [], null),
  u32Frame(FrameType.Retire, 1),
];
const stream = Buffer.concat(frames);

/** What the frames are, read one whole frame at a time. */
const expected: Frame[] = frames.map((frame) => ({ type: frame[4]!, payload: frame.subarray(5) }));

describe('FrameReader (a byte stream cut anywhere)', () => {
  it('reads whole frames one by one, and all of them in one chunk', () => {
    expectFrames(read(frames), expected, 'frame by frame');
    expectFrames(read([stream]), expected, 'in one chunk');
    expect(expected.map((f) => f.type)).toEqual([5, 4, 1, 2, 6, 3, 8, 4]);
  });

  it('reads the same frames with the stream cut in two at every offset', () => {
    for (let offset = 0; offset <= stream.length; offset++) {
      expectFrames(read(cut(stream, [offset])), expected, `cut at ${offset}`);
    }
  });

  it('reads the same frames with the frames before the large one cut in three at every pair of offsets', () => {
    // The first five frames (the 3000-byte body would make this quadratic loop slow): every way
    // of cutting them into three chunks, so a frame header can be split across three of them.
    const head = Buffer.concat(frames.slice(0, 5));
    const headFrames = expected.slice(0, 5);
    for (let i = 0; i <= head.length; i++) {
      for (let j = i; j <= head.length; j++) {
        expectFrames(read(cut(head, [i, j])), headFrames, `cut at ${i} and ${j}`);
      }
    }
  });

  it('reads the same frames fed one byte at a time', () => {
    expectFrames(
      read(
        cut(
          stream,
          Array.from({ length: stream.length - 1 }, (_, i) => i + 1),
        ),
      ),
      expected,
      'byte by byte',
    );
  });

  it('reads the same frames however the stream is chunked (random cuts, empty chunks included)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: stream.length }), { maxLength: 60 }), (cuts) => {
        expectFrames(read(cut(stream, cuts)), expected, `cut at ${cuts.join(', ')}`);
      }),
      { numRuns: 500 },
    );
  });

  it('reads any frames back however their stream is chunked', () => {
    const frame = fc.oneof(
      fc.constantFrom(...Object.values(FrameType)).map((type) => emptyFrame(type)),
      fc
        .tuple(fc.constantFrom(...Object.values(FrameType)), fc.integer({ min: 0, max: 0xffff_ffff }))
        .map(([type, n]) => u32Frame(type, n)),
      fc
        .tuple(fc.constantFrom(...Object.values(FrameType)), fc.jsonValue({ maxDepth: 2 }))
        .map(([type, value]) => jsonFrame(type, value)),
      fc
        .tuple(fc.constantFrom(...Object.values(FrameType)), fc.uint8Array({ maxLength: 600 }))
        .map(([type, body]) => envelopeFrame(type, 1, 2, [], Buffer.from(body))),
    );
    const input = fc.array(frame, { minLength: 1, maxLength: 12 }).chain((list) => {
      const whole = Buffer.concat(list);
      return fc.tuple(fc.constant(list), fc.array(fc.integer({ min: 0, max: whole.length }), { maxLength: 30 }));
    });
    fc.assert(
      fc.property(input, ([list, cuts]) => {
        const want = list.map((f) => ({ type: f[4]!, payload: f.subarray(5) }));
        expectFrames(read(cut(Buffer.concat(list), cuts)), want, `cut at ${cuts.join(', ')}`);
      }),
      { numRuns: 300 },
    );
  });
});

describe('FrameReader copies a frame only when it arrived in several chunks', () => {
  const big = envelopeFrame(FrameType.Request, 1, 0, ['meta'], Buffer.alloc(5000, 0xcd));
  const small = envelopeFrame(FrameType.Response, 2, 200, [[]], Buffer.from('ok'));

  function payloads(chunks: readonly Buffer[]): Buffer[] {
    const got: Buffer[] = [];
    const reader = new FrameReader((_type, payload) => got.push(payload));
    for (const chunk of chunks) reader.push(chunk);
    return got;
  }

  it('passes a frame that came whole as a view into its chunk', () => {
    const chunk = Buffer.concat([small, big]);
    const [first, second] = payloads([chunk]);
    expect([first!.buffer, second!.buffer]).toEqual([chunk.buffer, chunk.buffer]);
    expect(first!.byteOffset).toBe(chunk.byteOffset + 5);
    expect(second!.byteOffset).toBe(chunk.byteOffset + small.length + 5);
  });

  it('joins a frame cut across chunks into a buffer of its own, and reads what follows it in place', () => {
    const stream = Buffer.concat([small, big, small]);
    // Cut inside the large frame's length prefix, then inside its body.
    const chunks = [
      stream.subarray(0, small.length + 2),
      stream.subarray(small.length + 2, small.length + 3000),
      stream.subarray(small.length + 3000),
    ];
    const [first, joined, after] = payloads(chunks);
    expect(first!.buffer).toBe(chunks[0]!.buffer);
    expect(joined!.equals(big.subarray(5))).toBe(true);
    expect(joined!.byteLength).toBe(big.length - 5);
    expect(joined!.buffer).not.toBe(chunks[1]!.buffer);
    expect(after!.equals(small.subarray(5))).toBe(true);
    expect(after!.buffer).toBe(chunks[2]!.buffer);
  });
});
