/**
 * The connection of a shared thread: one socket to the router for all the actors the thread serves,
 * each in a channel of its own (FrameType.Channel), so that a request and its answer cost the
 * batches of one socket instead of a syscall each on a hundred sockets. A channel starts with its
 * actor's hello and ends with an End frame from the thread, or when the socket closes.
 */
import type { Socket } from 'node:net';
import { safeEqual } from '../security/safe-equal.js';
import {
  CHANNEL_PREFIX,
  emptyFrame,
  FrameType,
  FRAME_HEADER,
  type BodyBytes,
  type FrameSink,
  type FrameWriter,
} from './frames.js';
import { decodeHello, WIRE_VERSION, type ThreadHello } from './hello.js';

/** One channel's frames, written with the batches of its connection's writer. */
export class ChannelWriter implements FrameSink {
  constructor(
    private readonly connection: FrameWriter,
    readonly channel: number,
  ) {}

  write(frame: Buffer): void {
    this.connection.writeInChannel(this.channel, frame, null);
  }

  writeFrame(head: Buffer, body: BodyBytes, now = false): void {
    this.connection.writeInChannel(this.channel, head, body, now);
  }

  flushNow(): void {
    this.connection.flushNow();
  }
}

/** A Channel frame's payload taken apart: the channel, and the type and payload of the frame it carries. */
export function openChannelFrame(payload: Buffer): { channel: number; type: number; inner: Buffer } | null {
  if (payload.length < 4 + FRAME_HEADER) return null;
  return { channel: payload.readUInt32LE(0), type: payload[4 + 4]!, inner: payload.subarray(CHANNEL_PREFIX) };
}

/** Requests sent on a connection and not answered yet, over all its channels. */
export interface ConnectionLoad {
  inFlight: number;
}

/** What the router's end of one actor on a thread talks through: the thread's own socket, or a channel of its shared connection. */
export interface Conduit {
  readonly writer: FrameSink;
  /** The load of the whole connection (a request to a connection with nothing in flight is written at once). */
  readonly load: ConnectionLoad;
  /** Called once, when the socket closes or the channel ends. */
  onClose(listener: () => void): void;
  /** Refused from this end (its actor is unknown): a socket is destroyed, a channel told to retire. */
  refuse(): void;
}

/** A frame reader whose handler can be swapped once the hello has been read. */
export interface Replaceable {
  replace(handler: (type: number, payload: Buffer) => void): void;
}

/** A thread's own socket as a Conduit. */
export class SocketConduit implements Conduit {
  readonly writer: FrameSink;
  readonly load: ConnectionLoad = { inFlight: 0 };

  constructor(
    private readonly socket: Socket,
    writer: FrameSink,
  ) {
    this.writer = writer;
  }

  onClose(listener: () => void): void {
    this.socket.on('close', listener);
  }

  refuse(): void {
    this.socket.destroy();
  }
}

/** One channel of a shared connection, at the router's end. */
class ChannelEnd implements Conduit, Replaceable {
  readonly writer: ChannelWriter;
  private handler: (type: number, payload: Buffer) => void = () => {};
  private readonly listeners: Array<() => void> = [];
  closed = false;

  constructor(
    writer: FrameWriter,
    channel: number,
    readonly load: ConnectionLoad,
  ) {
    this.writer = new ChannelWriter(writer, channel);
  }

  replace(handler: (type: number, payload: Buffer) => void): void {
    this.handler = handler;
  }

  deliver(type: number, payload: Buffer): void {
    if (!this.closed) this.handler(type, payload);
  }

  onClose(listener: () => void): void {
    this.listeners.push(listener);
  }

  refuse(): void {
    // Its frames are dropped until the thread ends the channel.
    this.writer.write(emptyFrame(FrameType.Retire));
    this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const listener of this.listeners) listener();
  }
}

/**
 * The router's end of a shared connection: takes its Channel frames apart, greets each new channel
 * as ThreadServer greets a socket (the first frame a hello with the cell token and this build's
 * wire version), and hands each greeted channel on as a Conduit. A channel whose first frame is
 * anything else, or a hello that fails, closes the whole connection (only a thread holding the
 * token got this far).
 */
export class ChannelHub {
  private readonly channels = new Map<number, ChannelEnd>();
  private readonly load: ConnectionLoad = { inFlight: 0 };

  constructor(
    private readonly socket: Socket,
    private readonly writer: FrameWriter,
    private readonly token: string,
    private readonly onWrongVersion: (hello: ThreadHello) => void,
    private readonly onActor: (hello: ThreadHello, conduit: Conduit, reader: Replaceable) => void,
  ) {
    socket.on('close', () => {
      for (const channel of this.channels.values()) channel.close();
      this.channels.clear();
    });
  }

  /** A frame of the connection (after its spare hello). */
  frame(type: number, payload: Buffer): void {
    const opened = type === FrameType.Channel ? openChannelFrame(payload) : null;
    if (opened === null) return this.fail();
    const { channel, type: innerType, inner } = opened;
    const known = this.channels.get(channel);
    if (known !== undefined) {
      if (innerType === FrameType.End) {
        this.channels.delete(channel);
        known.close();
      } else known.deliver(innerType, inner);
      return;
    }
    const hello = innerType === FrameType.Hello ? decodeHello(inner) : null;
    if (hello === null || !safeEqual(this.token, hello.token)) return this.fail();
    if (hello.version !== WIRE_VERSION) {
      this.fail();
      this.onWrongVersion(hello);
      return;
    }
    const end = new ChannelEnd(this.writer, channel, this.load);
    this.channels.set(channel, end);
    this.onActor(hello, end, end);
  }

  private fail(): void {
    this.socket.destroy();
  }
}
