/**
 * Round trips of every codec in src/shared/protocol, as properties (fast-check): whatever a sender encodes,
 * the receiver decodes to the same value, after exactly one frame of the expected type went through
 * a FrameReader. Where the wire normalises on purpose (an empty request body is no body, a response
 * body arrives as bytes), the expected value says so. A frame written in pieces (a head, then a body
 * the router does not copy: FrameWriter.writeFrame) is read back from its pieces joined, as the
 * socket delivers them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  answerPayload,
  callResultHead,
  decodeCall,
  decodeCallResult,
  encodeCallHead,
  type BusCall,
  type BusResponse,
} from '../../src/shared/protocol/bus-calls.js';
import {
  decodeEnqueue,
  decodeEnqueueResult,
  encodeEnqueue,
  encodeEnqueueResult,
  type EnqueueOutcome,
  type EnqueueRequest,
} from '../../src/shared/protocol/enqueue.js';
import {
  bodySize,
  emptyFrame,
  envelopeFrame,
  envelopeHead,
  FrameReader,
  FrameType,
  jsonFrame,
  readEnvelope,
  readEnvelopeLabel,
  u32Frame,
  u32Head,
  type BodyBytes,
} from '../../src/shared/protocol/frames.js';
import { decodeHello, encodeHello, WIRE_VERSION, type ThreadHello } from '../../src/shared/protocol/hello.js';
import {
  decodeNotTaken,
  decodePeerOffer,
  encodePeerOffer,
  notTakenFrame,
  type PeerOffer,
} from '../../src/shared/protocol/peers.js';
import {
  decodeRequest,
  decodeResponse,
  encodeRequestHead,
  encodeResponse,
  readResponseBytes,
  responseNumber,
  type EngineRequest,
  type OutgoingResponse,
  type RoutedRequest,
} from '../../src/shared/protocol/requests.js';
import { decodeStats, encodeStats, type ThreadStats } from '../../src/shared/protocol/stats.js';
import type { FileRef } from '../../src/shared/protocol/file-ref.js';

/** The one frame in `frame`, read back as a receiver reads it; fails unless it is exactly one frame. */
function unframe(frame: Buffer): { type: number; payload: Buffer } {
  const frames: Array<{ type: number; payload: Buffer }> = [];
  new FrameReader((type, payload) => frames.push({ type, payload: Buffer.from(payload) })).push(frame);
  expect(frames).toHaveLength(1);
  expect(frame.readUInt32LE(0)).toBe(frame.length - 4);
  return frames[0]!;
}

/** The bytes of a frame written as a head and a body apart (FrameWriter.writeFrame), as they reach the other end. */
function joined(head: Buffer, body: BodyBytes): Buffer {
  return Buffer.concat([head, ...(body === null ? [] : Buffer.isBuffer(body) ? [body] : body)]);
}

/** A payload of `type`, from the frame `encode` made. */
function payloadOf(type: FrameType, frame: Buffer): Buffer {
  const read = unframe(frame);
  expect(read.type).toBe(type);
  return read.payload;
}

// Text that travels in JSON (meta, hellos, stats): any code point, lone surrogates too (JSON
// escapes them), so multi-byte UTF-8 tests the meta length the envelope records.
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const textUnit = fc.oneof(
  { weight: 9, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: loneSurrogate },
);
const jsonText = fc.string({ unit: textUnit, maxLength: 40 });
const jsonValue = fc.jsonValue({ stringUnit: textUnit, maxDepth: 4 });
// Text that travels as UTF-8 bytes (an enqueued payload, an envelope's label such as a route):
// well-formed, as JSON.stringify makes it and as a route template read from a file is.
const utf8Text = fc.string({ unit: 'binary', maxLength: 200 });
const u32 = fc.integer({ min: 0, max: 0xffff_ffff });
const u16 = fc.integer({ min: 0, max: 0xffff });
// -0 would come back as 0 from JSON (and no counter or duration is -0).
const seconds = fc.double({ min: 0, max: 1e6, noNaN: true }).map((x) => x + 0);
const bytes = fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a));
const rawHeaders = fc.array(jsonText, { maxLength: 12 });
const fileRef: fc.Arbitrary<FileRef> = fc.record({
  path: jsonText,
  dev: fc.nat(),
  ino: fc.nat(),
  size: fc.nat(),
  ctimeMs: seconds,
});
const frameType = fc.constantFrom(...Object.values(FrameType));

/** What a body of the envelope arrives as: its bytes (a string as UTF-8, null as nothing, chunks joined). */
const asBytes = (body: Buffer | readonly Buffer[] | string | null): Buffer =>
  body === null
    ? Buffer.alloc(0)
    : typeof body === 'string'
      ? Buffer.from(body)
      : Buffer.isBuffer(body)
        ? Buffer.from(body)
        : Buffer.concat(body);
/** A body as the router may hold it: none, one buffer, or the chunks it arrived in (some empty). */
const bodyBytes: fc.Arbitrary<BodyBytes> = fc.oneof(fc.constant(null), bytes, fc.array(bytes, { maxLength: 5 }));

describe('frames.ts codecs', () => {
  it('jsonFrame carries the JSON text of its value', () => {
    fc.assert(
      fc.property(frameType, jsonValue, (type, value) => {
        expect(JSON.parse(payloadOf(type, jsonFrame(type, value)).toString('utf8'))).toEqual(
          JSON.parse(JSON.stringify(value)),
        );
      }),
    );
  });

  it('u32Frame carries its number, emptyFrame nothing', () => {
    fc.assert(
      fc.property(frameType, u32, (type, n) => {
        const payload = payloadOf(type, u32Frame(type, n));
        expect([payload.length, payload.readUInt32LE(0)]).toEqual([4, n]);
        expect(payloadOf(type, emptyFrame(type)).length).toBe(0);
      }),
    );
  });

  it('u32Head + a body apart: the number, then the body', () => {
    fc.assert(
      fc.property(frameType, u32, bodyBytes, (type, n, body) => {
        const payload = payloadOf(type, joined(u32Head(type, n, bodySize(body)), body));
        expect(payload.readUInt32LE(0)).toBe(n);
        expect(payload.subarray(4)).toEqual(asBytes(body));
      }),
    );
  });

  it('envelopeFrame → readEnvelope gives back number, small, label, meta and body', () => {
    const body = fc.oneof(fc.constant(null), jsonText, bytes);
    fc.assert(
      fc.property(
        frameType,
        u32,
        u16,
        jsonValue,
        body,
        fc.option(utf8Text, { nil: undefined }),
        (type, number, small, meta, sent, label) => {
          const payload = payloadOf(type, envelopeFrame(type, number, small, meta, sent, label));
          expect(readEnvelope(payload)).toEqual({
            number,
            small,
            label: label ?? '',
            meta: JSON.parse(JSON.stringify(meta)),
            body: asBytes(sent),
          });
          expect(readEnvelopeLabel(payload)).toBe(label ?? '');
        },
      ),
    );
  });

  it('envelopeHead + the body apart: the same bytes as envelopeFrame with the body in it; read at an offset too', () => {
    fc.assert(
      fc.property(
        frameType,
        u32,
        u16,
        jsonValue,
        bodyBytes,
        utf8Text,
        u32,
        (type, number, small, meta, body, label, before) => {
          const whole = joined(envelopeHead(type, number, small, meta, bodySize(body), label), body);
          expect(whole.equals(envelopeFrame(type, number, small, meta, asBytes(body), label))).toBe(true);
          const prefixed = Buffer.concat([u32Frame(type, before).subarray(5), payloadOf(type, whole)]);
          expect(readEnvelope(prefixed, 4)).toEqual({
            number,
            small,
            label,
            meta: JSON.parse(JSON.stringify(meta)),
            body: asBytes(body),
          });
        },
      ),
    );
  });
});

describe('requests.ts codecs (the request path)', () => {
  const request: fc.Arbitrary<EngineRequest> = fc.record(
    {
      id: jsonText,
      verb: jsonText,
      path: jsonText,
      rawQuery: jsonText,
      rawHeaders,
      body: fc.option(bytes, { nil: null }),
      ip: jsonText,
      hop: fc.nat({ max: 64 }),
      budget: fc.nat({ max: 1_000_000 }),
      viaBus: fc.boolean(),
      receivedAt: fc.nat(),
      job: jsonText,
    },
    {
      requiredKeys: [
        'id',
        'verb',
        'path',
        'rawQuery',
        'rawHeaders',
        'body',
        'ip',
        'hop',
        'budget',
        'viaBus',
        'receivedAt',
      ],
    },
  );

  it('encodeRequestHead + the body apart → decodeRequest: the same request (an empty body is no body)', () => {
    fc.assert(
      fc.property(u32, request, (number, sent) => {
        const decoded = decodeRequest(payloadOf(FrameType.Request, joined(encodeRequestHead(number, sent), sent.body)));
        expect(decoded).toEqual({
          number,
          request: { ...sent, body: sent.body === null || sent.body.length === 0 ? null : sent.body },
        });
      }),
    );
  });

  it('a request whose body is still in the chunks it arrived in (the router’s) decodes with them joined', () => {
    const routed: fc.Arbitrary<RoutedRequest> = request.chain((sent) => bodyBytes.map((body) => ({ ...sent, body })));
    fc.assert(
      fc.property(u32, routed, (number, sent) => {
        const { request: decoded } = decodeRequest(
          payloadOf(FrameType.Request, joined(encodeRequestHead(number, sent), sent.body)),
        );
        const body = asBytes(sent.body);
        expect(decoded).toEqual({ ...sent, body: body.length === 0 ? null : body });
      }),
    );
  });

  it('decodeRequest does not copy the body: it is a view into the frame', () => {
    const payload = payloadOf(
      FrameType.Request,
      joined(
        encodeRequestHead(1, {
          id: 'i',
          verb: 'POST',
          path: '/',
          rawQuery: '',
          rawHeaders: [],
          body: [Buffer.from('ab'), Buffer.from('c')],
          ip: '',
          hop: 0,
          budget: 1000,
          viaBus: false,
          receivedAt: 0,
        }),
        [Buffer.from('ab'), Buffer.from('c')],
      ),
    );
    const { request: decoded } = decodeRequest(payload);
    expect(decoded.body?.toString()).toBe('abc');
    expect(decoded.body?.buffer).toBe(payload.buffer);
    expect(decoded.body?.byteOffset).toBe(payload.byteOffset + payload.length - 3);
  });

  const response: fc.Arbitrary<OutgoingResponse> = fc.record(
    {
      status: u16,
      headers: rawHeaders,
      body: fc.oneof(fc.constant(null), jsonText, bytes),
      file: fileRef,
      route: utf8Text,
      budgetLeft: fc.nat({ max: 1_000_000 }),
    },
    { requiredKeys: ['status', 'headers', 'body'] },
  );

  it('encodeResponse → decodeResponse: the same response, its body as bytes and its route "" when it had none', () => {
    fc.assert(
      fc.property(u32, response, (number, sent) => {
        const decoded = decodeResponse(payloadOf(FrameType.Response, encodeResponse(number, sent)));
        const expected = {
          status: sent.status,
          headers: sent.headers,
          body: asBytes(sent.body),
          route: sent.route ?? '',
        };
        const withFile = sent.file === undefined ? expected : { ...expected, file: sent.file };
        expect(decoded).toEqual({
          number,
          response: sent.budgetLeft === undefined ? withFile : { ...withFile, budgetLeft: sent.budgetLeft },
        });
        expect('file' in decoded.response).toBe(sent.file !== undefined);
        expect('budgetLeft' in decoded.response).toBe(sent.budgetLeft !== undefined);
      }),
    );
  });

  it('readResponseBytes reads status and route and keeps the payload as it is; responseNumber its number', () => {
    fc.assert(
      fc.property(u32, response, (number, sent) => {
        const payload = payloadOf(FrameType.Response, encodeResponse(number, sent));
        const bytes = readResponseBytes(payload);
        expect(bytes).toEqual({ status: sent.status, route: sent.route ?? '', payload });
        expect(bytes.payload).toBe(payload);
        expect(responseNumber(payload)).toBe(number);
      }),
    );
  });
});

describe('bus-calls.ts codecs', () => {
  const call: fc.Arbitrary<BusCall> = fc.record({
    verb: jsonText,
    path: jsonText,
    rawQuery: jsonText,
    rawHeaders,
    body: fc.option(bytes, { nil: null }),
    hop: fc.nat({ max: 64 }),
    budget: fc.nat({ max: 1_000_000 }),
  });

  it('encodeCallHead + the body apart → decodeCall: the same call (an empty body is no body)', () => {
    fc.assert(
      fc.property(u32, call, (number, sent) => {
        const decoded = decodeCall(payloadOf(FrameType.Call, joined(encodeCallHead(number, sent), sent.body)));
        expect(decoded).toEqual({
          number,
          call: { ...sent, body: sent.body === null || sent.body.length === 0 ? null : sent.body },
        });
      }),
    );
  });

  // The router forwards the target thread's Response payload after the call number, unread.
  it('a target’s Response payload forwarded in a CallResult → decodeCallResult: status, headers and the body as bytes', () => {
    const answer: fc.Arbitrary<OutgoingResponse> = fc.record(
      {
        status: u16,
        headers: rawHeaders,
        body: fc.oneof(fc.constant(null), jsonText, bytes),
        route: utf8Text,
        budgetLeft: fc.nat({ max: 1_000_000 }),
      },
      { requiredKeys: ['status', 'headers', 'body'] },
    );
    fc.assert(
      fc.property(u32, u32, answer, (callNumber, requestNumber, sent) => {
        const responsePayload = payloadOf(FrameType.Response, encodeResponse(requestNumber, sent));
        const decoded = decodeCallResult(
          payloadOf(FrameType.CallResult, joined(callResultHead(callNumber, responsePayload.length), responsePayload)),
        );
        expect(decoded).toEqual({
          number: callNumber,
          response: {
            status: sent.status,
            headers: sent.headers,
            body: asBytes(sent.body),
            budgetLeft: sent.budgetLeft ?? 0,
          },
        });
      }),
    );
  });

  it('an answer the router gives itself (answerPayload) → decodeCallResult: the same answer', () => {
    const answer: fc.Arbitrary<BusResponse> = fc.record({
      status: u16,
      headers: rawHeaders,
      body: bytes,
      budgetLeft: fc.nat({ max: 1_000_000 }),
    });
    fc.assert(
      fc.property(u32, answer, (callNumber, sent) => {
        const responsePayload = answerPayload(sent);
        expect(readResponseBytes(responsePayload)).toEqual({
          status: sent.status,
          route: '',
          payload: responsePayload,
        });
        const decoded = decodeCallResult(
          payloadOf(FrameType.CallResult, joined(callResultHead(callNumber, responsePayload.length), responsePayload)),
        );
        expect(decoded).toEqual({ number: callNumber, response: sent });
      }),
    );
  });
});

describe('enqueue.ts codecs', () => {
  it('encodeEnqueue → decodeEnqueue: the same job (its payload is well-formed text: JSON)', () => {
    const request: fc.Arbitrary<EnqueueRequest> = fc.record({
      payload: utf8Text,
      delayMs: fc.nat(),
      quota: fc.record({ maxPayloadBytes: fc.nat(), maxQueued: fc.nat() }),
    });
    fc.assert(
      fc.property(u32, request, (number, sent) => {
        expect(decodeEnqueue(payloadOf(FrameType.Enqueue, encodeEnqueue(number, sent)))).toEqual({
          number,
          request: sent,
        });
      }),
    );
  });

  it('encodeEnqueueResult → decodeEnqueueResult: the same outcome, stored or refused', () => {
    const outcome: fc.Arbitrary<EnqueueOutcome> = fc.oneof(
      fc.record({ ok: fc.constant(true as const), id: jsonText }),
      fc.record(
        { ok: fc.constant(false as const), status: u16, error: jsonText, code: jsonText, retryAfter: fc.nat() },
        { requiredKeys: ['ok', 'status', 'error'] },
      ),
    );
    fc.assert(
      fc.property(u32, outcome, (number, sent) => {
        expect(decodeEnqueueResult(payloadOf(FrameType.EnqueueResult, encodeEnqueueResult(number, sent)))).toEqual({
          number,
          outcome: sent,
        });
      }),
    );
  });
});

describe('hello.ts codecs', () => {
  const hello: fc.Arbitrary<ThreadHello> = fc.record(
    {
      version: fc.oneof(fc.constant(WIRE_VERSION), fc.nat()),
      token: jsonText,
      cell: fc.nat(),
      actor: jsonText,
      thread: fc.integer({ min: -1, max: 1000 }),
      peer: jsonText,
    },
    { requiredKeys: ['version', 'token', 'cell', 'actor', 'thread'] },
  );

  it('encodeHello → decodeHello: the same hello, its version included', () => {
    fc.assert(
      fc.property(hello, (sent) => {
        expect(decodeHello(payloadOf(FrameType.Hello, encodeHello(sent)))).toEqual(sent);
      }),
    );
  });

  it('decodeHello never throws: anything but a hello is null', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          bytes,
          jsonValue.map((v) => Buffer.from(JSON.stringify(v) ?? '')),
        ),
        (payload) => {
          const decoded = decodeHello(payload);
          if (decoded !== null)
            expect([typeof decoded.token, typeof decoded.actor, typeof decoded.version]).toEqual([
              'string',
              'string',
              'number',
            ]);
        },
      ),
    );
    expect(decodeHello(Buffer.from('null'))).toBeNull();
  });
});

describe('peers.ts codecs', () => {
  it('encodePeerOffer → decodePeerOffer: the same offer', () => {
    const offer: fc.Arbitrary<PeerOffer> = fc.record({ key: jsonText, actor: jsonText, address: jsonText });
    fc.assert(
      fc.property(offer, (sent) => {
        expect(decodePeerOffer(payloadOf(FrameType.Peer, encodePeerOffer(sent)))).toEqual(sent);
      }),
    );
  });

  it('notTakenFrame → decodeNotTaken: the request number; a plain Retire has none', () => {
    fc.assert(
      fc.property(u32, (number) => {
        expect(decodeNotTaken(payloadOf(FrameType.Retire, notTakenFrame(number)))).toBe(number);
      }),
    );
    expect(decodeNotTaken(payloadOf(FrameType.Retire, emptyFrame(FrameType.Retire)))).toBeNull();
  });
});

describe('stats.ts codecs', () => {
  it('encodeStats → decodeStats: the same report, with or without each optional count', () => {
    const buckets = fc.array(fc.nat(), { maxLength: 17 });
    const pairs = fc.array(fc.tuple(jsonText, fc.nat()), { maxLength: 4 });
    const stats: fc.Arbitrary<ThreadStats> = fc.record(
      {
        isolateHeapBytes: fc.nat(),
        isolates: fc.nat(),
        cpuMs: seconds,
        windowMs: seconds,
        requests: fc.nat(),
        served: fc.array(fc.tuple(jsonText, u16, fc.nat(), seconds, buckets), { maxLength: 4 }),
        peerCalls: fc.nat(),
        sandboxCpu: fc.array(fc.tuple(jsonText, fc.nat(), seconds, buckets), { maxLength: 4 }),
        quotaRefusals: pairs,
        logFilesRemoved: pairs,
      },
      { requiredKeys: ['isolateHeapBytes', 'isolates', 'cpuMs', 'windowMs', 'requests'] },
    );
    fc.assert(
      fc.property(stats, (sent) => {
        expect(decodeStats(payloadOf(FrameType.Stats, encodeStats(sent)))).toEqual(sent);
      }),
    );
  });
});
