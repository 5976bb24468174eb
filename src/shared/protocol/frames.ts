/**
 * Framing of the router ↔ actor-thread socket: [u32 length of the rest][u8 type][payload].
 * Requests and responses are pipelined on one socket per thread (a shared thread's actors each in a
 * channel of it: thread-channels.ts); writes are batched (see FrameWriter), so many frames cost one
 * syscall.
 */
import type { Socket } from 'node:net';

export const FrameType = {
  /** thread → router, first frame: who the thread is (JSON ThreadHello). */
  Hello: 1,
  /** router → thread: one request (u32 request number, then RequestMeta JSON, then the body). */
  Request: 2,
  /** thread → router: one response (u32 request number, u16 status, route label, headers JSON, body). */
  Response: 3,
  /** router → thread: no more requests will come; finish and exit. Also peer → caller: send no
   * more calls here (the answers to those sent still come), or, with a u32 request number, that
   * request was not run (send it through the router). */
  Retire: 4,
  /** router → thread: are you responsive? (sent when a busy thread has been silent a while) */
  Ping: 5,
  /** thread → router: the answer to Ping. */
  Pong: 6,
  /** thread → router: a request to another API of the same host, over the in-process bus. */
  Call: 7,
  /** router → thread: the answer to a Call (u32 call number, then a Response payload: the target thread's, forwarded as it came). */
  CallResult: 8,
  /** thread → router: store this job durably (u32 number, then {payload, delayMs} JSON). */
  Enqueue: 9,
  /** router → thread: the job id, or why it was not stored (u32 number, u16 0|1, then JSON). */
  EnqueueResult: 10,
  /** thread → router, every few seconds: what the thread holds (JSON ThreadStats). */
  Stats: 11,
  /** router → thread: calls to API <key> may go straight to a thread of it (JSON PeerOffer). */
  Peer: 12,
  /** router → thread: its API was superseded; stop taking calls from peers (they go to the router). */
  PeerStop: 13,
  /** thread → router: it kept a core busy lately (cell/actors/cpu-shares.ts): its API may need another thread. */
  Busy: 14,
  /**
   * Either way, on the connection of a shared thread (one socket for all the actors it serves): a
   * frame of one of them, [u32 channel][the frame, its length and type included]. A channel is one
   * actor on that thread; its first frame is the actor's hello (shared/protocol/thread-channels.ts).
   */
  Channel: 15,
  /** thread → router, in a channel: the actor has retired and answered everything; its channel is closed. */
  End: 16,
} as const;
export type FrameType = (typeof FrameType)[keyof typeof FrameType];

/** The bytes before a frame's payload: u32 length (of the rest) + u8 type. */
export const FRAME_HEADER = 5;
const HEADER = FRAME_HEADER;

/**
 * Frames queued in one turn that are written at once, without waiting for the turn to end. A burst
 * of requests (many connections readable in one turn) then reaches the thread while the router
 * still parses the rest, so both CPUs work on the burst instead of one after the other; the same for
 * a burst of answers. Measured at 20 000 req/s, open loop: p50 0.85-1.02 → 0.78-0.81 ms, saturated
 * throughput unchanged within the noise (wrk, 3 rounds each).
 */
const WRITE_AT_ONCE = 4;

/**
 * The batch of the request path's sockets (router → thread: requests; thread → router: responses).
 * Under saturation each of those writes was a syscall for four requests or answers, ~13 % of the
 * router's busy time; sixteen cut the CPU per request by ~3 % on each side (A/B at saturation, four
 * rounds). The burst argument above still holds where it matters: the router writes a request at
 * once when its thread has nothing in flight (ThreadLink.send), so an idle thread starts at once.
 */
export const REQUEST_PATH_WRITE_AT_ONCE = 16;

/**
 * Bytes written after a frame's head as they are, never copied into it: one buffer, or the chunks
 * they arrived in (a request body as the router received it). Null: none.
 */
export type BodyBytes = Buffer | readonly Buffer[] | null;

/** How many bytes `body` holds. */
export function bodySize(body: BodyBytes): number {
  if (body === null) return 0;
  if (Buffer.isBuffer(body)) return body.length;
  let size = 0;
  for (const chunk of body) size += chunk.length;
  return size;
}

/** Where frames are written: a socket's FrameWriter, or one channel of a shared connection's (ChannelWriter). */
export interface FrameSink {
  /** A whole frame. */
  write(frame: Buffer): void;
  /** A frame's head, then its body as it is (see FrameWriter.writeFrame); `now`: written at once. */
  writeFrame(head: Buffer, body: BodyBytes, now?: boolean): void;
  /** Writes what is queued now. */
  flushNow(): void;
}

/** The bytes a Channel frame puts before the frame it carries: [u32 length][u8 Channel][u32 channel]. */
export const CHANNEL_PREFIX = HEADER + 4;

/**
 * Collects frames and writes them in batches: every WRITE_AT_ONCE frames, and at the end of the
 * turn. A batch leaves in one syscall. A batch of whole frames is joined into one buffer (small
 * frames: one write costs less than many); a batch with a body written apart (writeFrame) is
 * written corked instead (one writev), so that the body is never copied here.
 */
export class FrameWriter implements FrameSink {
  private parts: Buffer[] = [];
  private frames = 0;
  /** A body written apart is queued: the batch is written corked, not joined. */
  private apart = false;
  private scheduled = false;

  constructor(
    private readonly socket: Socket,
    /** Frames that make a batch written at once (see WRITE_AT_ONCE). */
    private readonly writeAtOnce = WRITE_AT_ONCE,
  ) {}

  /** A whole frame. */
  write(frame: Buffer): void {
    this.parts.push(frame);
    this.queued();
  }

  /**
   * A frame in two pieces: its head (its length counts the body's bytes), then its body, written as
   * it is (not copied). The body must not change until it is written. `now`: written at once, with
   * what is queued before it, instead of with the batch.
   */
  writeFrame(head: Buffer, body: BodyBytes, now = false): void {
    this.parts.push(head);
    this.pushBody(body, now);
  }

  /**
   * A frame of channel `channel` (a Channel frame around it): its head (or the whole frame), then
   * its body as writeFrame writes one.
   */
  writeInChannel(channel: number, head: Buffer, body: BodyBytes, now = false): void {
    const prefix = Buffer.allocUnsafe(CHANNEL_PREFIX);
    prefix.writeUInt32LE(1 + 4 + 4 + head.readUInt32LE(0), 0);
    prefix[4] = FrameType.Channel;
    prefix.writeUInt32LE(channel, HEADER);
    this.parts.push(prefix, head);
    this.pushBody(body, now);
  }

  private pushBody(body: BodyBytes, now: boolean): void {
    if (body !== null) {
      if (Buffer.isBuffer(body)) {
        if (body.length > 0) {
          this.parts.push(body);
          this.apart = true;
        }
      } else if (body.length > 0) {
        for (const chunk of body) this.parts.push(chunk);
        this.apart = true;
      }
    }
    if (now) this.writeQueued();
    else this.queued();
  }

  /** Writes what is queued now (before ending the socket: a queued frame would otherwise be lost). */
  flushNow(): void {
    this.flush();
  }

  private queued(): void {
    if (++this.frames >= this.writeAtOnce) {
      this.writeQueued();
      return;
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    this.writeQueued();
  };

  private writeQueued(): void {
    const parts = this.parts;
    if (parts.length === 0) return;
    const apart = this.apart;
    this.parts = [];
    this.frames = 0;
    this.apart = false;
    if (this.socket.destroyed) return;
    if (parts.length === 1) {
      this.socket.write(parts[0]!);
    } else if (!apart) {
      this.socket.write(Buffer.concat(parts));
    } else {
      // Corked, the writes are buffered, and uncork hands them all to one writev.
      this.socket.cork();
      for (const part of parts) this.socket.write(part);
      this.socket.uncork();
    }
  }
}

/**
 * Splits a byte stream into frames; calls `onFrame(type, payload)` for each complete one. A frame
 * that arrived whole in one chunk is passed as a view into that chunk (no copy). A frame that
 * arrived in several chunks is joined once it is complete: that join is the only copy a frame's
 * bytes get here, and only that frame is copied (what follows it in its last chunk is read in
 * place). The payload is never overwritten (chunks are not reused): a view kept past the current
 * turn stays valid, and keeps the memory of the chunk it is in alive as long as it is kept.
 */
export class FrameReader {
  /** The start of a frame that has not fully arrived: the chunks (or the end of one) it came in so far. */
  private partial: Buffer[] = [];
  private buffered = 0;
  /** Bytes that frame needs in all (0 while its length prefix has not fully arrived). */
  private needed = 0;

  constructor(private readonly onFrame: (type: number, payload: Buffer) => void) {}

  push(chunk: Buffer): void {
    let data = chunk;
    if (this.buffered > 0) {
      this.partial.push(chunk);
      this.buffered += chunk.length;
      if (this.needed === 0) {
        if (this.buffered < 4) return;
        // The length prefix itself was cut: its 4 bytes are joined to read it.
        this.needed = frameSize(Buffer.concat(this.partial, 4).readUInt32LE(0));
      }
      if (this.buffered < this.needed) return; // a large frame still arriving: no copying meanwhile
      // Complete (the bytes past it are all in this chunk): joined, the only copy of its bytes.
      const frame = Buffer.concat(this.partial, this.needed);
      data = chunk.subarray(chunk.length - (this.buffered - this.needed));
      this.partial = [];
      this.buffered = 0;
      this.needed = 0;
      this.onFrame(frame[4]!, frame.subarray(HEADER));
    }
    let offset = 0;
    while (data.length - offset >= HEADER) {
      const end = offset + frameSize(data.readUInt32LE(offset));
      if (end > data.length) break;
      this.onFrame(data[offset + 4]!, data.subarray(offset + HEADER, end));
      offset = end;
    }
    if (offset < data.length) {
      const rest = offset === 0 ? data : data.subarray(offset);
      this.partial = [rest];
      this.buffered = rest.length;
      this.needed = rest.length >= 4 ? frameSize(rest.readUInt32LE(0)) : 0;
    }
  }
}

/** A frame's bytes from its length prefix (a frame has at least its type byte, even a malformed one). */
function frameSize(length: number): number {
  return 4 + Math.max(1, length);
}

/** A frame whose payload is one JSON value. */
export function jsonFrame(type: FrameType, value: unknown): Buffer {
  const json = JSON.stringify(value);
  const size = Buffer.byteLength(json);
  const frame = Buffer.allocUnsafe(HEADER + size);
  frame.writeUInt32LE(1 + size, 0);
  frame[4] = type;
  frame.write(json, HEADER, 'utf8');
  return frame;
}

/** A frame whose payload is one u32 (a request number). */
export function u32Frame(type: FrameType, value: number): Buffer {
  return u32Head(type, value, 0);
}

/** The head of a frame of [u32 value][`bodySize` bytes written after it apart (FrameWriter.writeFrame)]. */
export function u32Head(type: FrameType, value: number, bodySize: number): Buffer {
  const head = Buffer.allocUnsafe(HEADER + 4);
  head.writeUInt32LE(1 + 4 + bodySize, 0);
  head[4] = type;
  head.writeUInt32LE(value, HEADER);
  return head;
}

export function emptyFrame(type: FrameType): Buffer {
  const frame = Buffer.allocUnsafe(HEADER);
  frame.writeUInt32LE(1, 0);
  frame[4] = type;
  return frame;
}

/** [u32 number][u16 small][u32 label size][u32 meta size] */
const ENVELOPE_FIXED = 4 + 2 + 4 + 4;

/**
 * A frame of [u32 number][u16 small][u32 labelLength][label][u32 metaLength][meta JSON][body]: the
 * shape shared by requests (small = 0) and responses (small = status, label = route). The label is
 * text a receiver can read without parsing the meta (readEnvelopeLabel); '' takes no bytes. It is
 * UTF-8, not JSON: a lone surrogate arrives as U+FFFD (a route template, read from text, has none). The body
 * is copied into the frame (a string is encoded into it): see envelopeHead for a body left apart.
 */
export function envelopeFrame(
  type: FrameType,
  number: number,
  small: number,
  meta: unknown,
  body: Buffer | string | null,
  label = '',
): Buffer {
  const json = JSON.stringify(meta);
  const labelSize = label === '' ? 0 : Buffer.byteLength(label);
  const metaSize = Buffer.byteLength(json);
  const bodySize = body === null ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  const headSize = HEADER + ENVELOPE_FIXED + labelSize + metaSize;
  const frame = Buffer.allocUnsafe(headSize + bodySize);
  fillEnvelopeHead(frame, type, number, small, label, labelSize, json, metaSize, bodySize);
  if (body !== null) {
    if (typeof body === 'string') frame.write(body, headSize, 'utf8');
    else body.copy(frame, headSize);
  }
  return frame;
}

/**
 * The head of an envelope frame whose body, `bodySize` bytes, is written after it apart
 * (FrameWriter.writeFrame) instead of being copied into it.
 */
export function envelopeHead(
  type: FrameType,
  number: number,
  small: number,
  meta: unknown,
  bodySize: number,
  label = '',
): Buffer {
  const json = JSON.stringify(meta);
  const labelSize = label === '' ? 0 : Buffer.byteLength(label);
  const metaSize = Buffer.byteLength(json);
  const head = Buffer.allocUnsafe(HEADER + ENVELOPE_FIXED + labelSize + metaSize);
  fillEnvelopeHead(head, type, number, small, label, labelSize, json, metaSize, bodySize);
  return head;
}

function fillEnvelopeHead(
  head: Buffer,
  type: FrameType,
  number: number,
  small: number,
  label: string,
  labelSize: number,
  json: string,
  metaSize: number,
  bodySize: number,
): void {
  const metaAt = HEADER + ENVELOPE_FIXED + labelSize;
  head.writeUInt32LE(metaAt - 4 + metaSize + bodySize, 0);
  head[4] = type;
  head.writeUInt32LE(number, HEADER);
  head.writeUInt16LE(small, HEADER + 4);
  head.writeUInt32LE(labelSize, HEADER + 6);
  if (labelSize > 0) head.write(label, HEADER + 10, 'utf8');
  head.writeUInt32LE(metaSize, metaAt - 4);
  head.write(json, metaAt, 'utf8');
}

export interface Envelope {
  number: number;
  small: number;
  label: string;
  meta: unknown;
  /** A view into the payload (see FrameReader): it keeps the payload's memory alive while kept. */
  body: Buffer;
}

/** The envelope that starts at `at` in `payload` (0: the payload is one). */
export function readEnvelope(payload: Buffer, at = 0): Envelope {
  const number = payload.readUInt32LE(at);
  const small = payload.readUInt16LE(at + 4);
  const label = readEnvelopeLabel(payload, at);
  const metaAt = at + ENVELOPE_FIXED + payload.readUInt32LE(at + 6);
  const metaSize = payload.readUInt32LE(metaAt - 4);
  const meta = JSON.parse(payload.toString('utf8', metaAt, metaAt + metaSize)) as unknown;
  return { number, small, label, meta, body: payload.subarray(metaAt + metaSize) };
}

/** Only the label of the envelope at `at` in `payload`: the meta is not parsed, the body not touched. */
export function readEnvelopeLabel(payload: Buffer, at = 0): string {
  const labelSize = payload.readUInt32LE(at + 6);
  return labelSize === 0 ? '' : payload.toString('utf8', at + 10, at + 10 + labelSize);
}
