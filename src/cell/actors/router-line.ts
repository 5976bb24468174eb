/**
 * An actor's line to the router, at the thread's end: a socket of its own (a dedicated thread), or
 * a channel of its shared thread's one connection (shared/protocol/thread-channels.ts), so that the frames
 * of all the actors a shared thread serves travel in the batches of one socket.
 */
import type { Socket } from 'node:net';
import {
  emptyFrame,
  FrameReader,
  FrameType,
  FrameWriter,
  REQUEST_PATH_WRITE_AT_ONCE,
  type FrameSink,
} from '../../shared/protocol/frames.js';
import { ChannelWriter, openChannelFrame } from '../../shared/protocol/thread-channels.js';

type OnFrame = (type: number, payload: Buffer) => void;

export interface RouterLine {
  readonly writer: FrameSink;
  /** Frames from the router go to `onFrame`; `onClose` once the router is gone. */
  listen(onFrame: OnFrame, onClose: () => void): void;
  /** The actor is done: its last frames leave, then `done` (at most a second later). */
  end(done: () => void): void;
}

/** A dedicated thread's socket. */
export class SocketLine implements RouterLine {
  readonly writer: FrameWriter;

  constructor(private readonly socket: Socket) {
    this.writer = new FrameWriter(socket, REQUEST_PATH_WRITE_AT_ONCE);
  }

  listen(onFrame: OnFrame, onClose: () => void): void {
    const reader = new FrameReader(onFrame);
    this.socket.on('data', (chunk) => reader.push(chunk));
    this.socket.on('close', onClose);
    this.socket.on('error', () => {
      // 'close' follows.
    });
  }

  end(done: () => void): void {
    // The last responses may still be queued for this turn's flush: written first, and done once
    // the socket has handed everything to the kernel (or after a second, if the router is gone).
    this.writer.flushNow();
    const timer = setTimeout(done, 1_000);
    timer.unref();
    this.socket.end(() => {
      clearTimeout(timer);
      done();
    });
  }
}

/** A shared thread's one connection to the router: a channel per actor. */
export class SharedConnection {
  readonly writer: FrameWriter;
  private readonly channels = new Map<number, { onFrame: OnFrame; onClose: () => void }>();
  private nextChannel = 1;
  private closed = false;

  constructor(private readonly socket: Socket) {
    this.writer = new FrameWriter(socket, REQUEST_PATH_WRITE_AT_ONCE);
    const reader = new FrameReader((type, payload) => {
      const opened = type === FrameType.Channel ? openChannelFrame(payload) : null;
      if (opened !== null) this.channels.get(opened.channel)?.onFrame(opened.type, opened.inner);
    });
    socket.on('data', (chunk) => reader.push(chunk));
    socket.on('close', () => {
      this.closed = true;
      const channels = [...this.channels.values()];
      this.channels.clear();
      for (const channel of channels) channel.onClose();
    });
    socket.on('error', () => {
      // 'close' follows.
    });
  }

  /** Usable for another actor (the router has not gone away meanwhile). */
  get open(): boolean {
    return !this.closed && !this.socket.destroyed;
  }

  line(): RouterLine {
    return new ChannelLine(this, this.nextChannel++);
  }

  listen(channel: number, onFrame: OnFrame, onClose: () => void): void {
    if (this.closed) queueMicrotask(onClose);
    else this.channels.set(channel, { onFrame, onClose });
  }

  drop(channel: number): void {
    this.channels.delete(channel);
  }
}

/** One actor's channel of a SharedConnection. */
class ChannelLine implements RouterLine {
  readonly writer: ChannelWriter;

  constructor(
    private readonly connection: SharedConnection,
    private readonly channel: number,
  ) {
    this.writer = new ChannelWriter(connection.writer, channel);
  }

  listen(onFrame: OnFrame, onClose: () => void): void {
    this.connection.listen(this.channel, onFrame, onClose);
  }

  end(done: () => void): void {
    this.writer.write(emptyFrame(FrameType.End));
    this.connection.drop(this.channel);
    done();
  }
}
