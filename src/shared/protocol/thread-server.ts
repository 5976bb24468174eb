import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { FrameReader, FrameType, FrameWriter } from './frames.js';
import { decodeHello, WIRE_VERSION, type ThreadHello } from './hello.js';
import { ChannelHub, SocketConduit, type Conduit, type Replaceable } from './thread-channels.js';
import { safeEqual } from '../security/safe-equal.js';

/** A frame reader whose handler can be swapped once the first (hello) frame has been read. */
export class SwitchableReader implements Replaceable {
  private handler: (type: number, payload: Buffer) => void;
  readonly reader: FrameReader;

  constructor(first: (type: number, payload: Buffer) => void) {
    this.handler = first;
    this.reader = new FrameReader((type, payload) => this.handler(type, payload));
  }

  replace(handler: (type: number, payload: Buffer) => void): void {
    this.handler = handler;
  }
}

/** An actor on a thread said hello: on a socket of its own, or in a channel of its shared thread's connection. */
export type ThreadArrival = (hello: ThreadHello, conduit: Conduit, reader: Replaceable) => void;

/** A thread with the right token but another wire version (`hello.version`; WIRE_VERSION is ours) was refused. */
export type WrongVersion = (hello: ThreadHello) => void;

/**
 * A Unix socket actor threads connect to: the router's, and each thread's own for calls from its
 * peers (cell/actors/peer-server.ts). The first frame must be a hello carrying the cell token and this
 * build's WIRE_VERSION; anything else closes the connection (a wrong version is reported first). A
 * spare thread connects to the router before it has an API (its hello names no actor), so a cold
 * start does not wait for a connection; its actor's hello follows — or, on a shared thread, Channel
 * frames follow, one channel per actor, each starting with that actor's hello (thread-channels.ts).
 */
export class ThreadServer {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  constructor(
    readonly path: string,
    private readonly token: string,
    private readonly onWrongVersion: WrongVersion,
    private readonly onThread: ThreadArrival,
    /** Frames its writers batch (FrameWriter's writeAtOnce; its default when not given). */
    private readonly writeAtOnce?: number,
  ) {
    this.server = createServer((socket) => this.accept(socket));
  }

  listen(): Promise<void> {
    if (!this.path.startsWith('\0')) rmSync(this.path, { force: true });
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.path, () => resolve());
    });
  }

  /** Accepts no more connections; those open stay open. */
  stopListening(): void {
    if (!this.server.listening) return;
    this.server.close();
    // A socket file (not an abstract name) would outlive the server.
    if (!this.path.startsWith('\0')) rmSync(this.path, { force: true });
  }

  close(): void {
    this.stopListening();
    for (const socket of this.sockets) socket.destroy();
  }

  private accept(socket: Socket): void {
    socket.setNoDelay(true);
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let greeted = false;
    let spare = false;
    const reader = new SwitchableReader((type, payload) => {
      // Frames that came in the same chunk as a refused hello are dropped with it.
      if (greeted || socket.destroyed) return;
      if (spare && type === FrameType.Channel) {
        greeted = true;
        const hub = new ChannelHub(
          socket,
          new FrameWriter(socket, this.writeAtOnce),
          this.token,
          this.onWrongVersion,
          this.onThread,
        );
        reader.replace((next, nextPayload) => hub.frame(next, nextPayload));
        hub.frame(type, payload);
        return;
      }
      const hello = type === FrameType.Hello ? decodeHello(payload) : null;
      if (hello === null || !safeEqual(this.token, hello.token)) {
        socket.destroy();
        return;
      }
      if (hello.version !== WIRE_VERSION) {
        socket.destroy();
        this.onWrongVersion(hello);
        return;
      }
      // A spare thread dialled ahead: it waits here until the cell gives it an API.
      if (hello.actor === '') {
        spare = true;
        return;
      }
      greeted = true;
      this.onThread(hello, new SocketConduit(socket, new FrameWriter(socket, this.writeAtOnce)), reader);
    });
    socket.on('data', (chunk) => reader.reader.push(chunk));
  }
}
