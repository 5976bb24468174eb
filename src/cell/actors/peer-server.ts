import { emptyFrame, FrameType, type FrameSink } from '../../shared/protocol/frames.js';
import { notTakenFrame } from '../../shared/protocol/peers.js';
import { decodeRequest, type EngineRequest } from '../../shared/protocol/requests.js';
import { ThreadServer, type WrongVersion } from '../../shared/protocol/thread-server.js';

/** Runs one request and writes its response frame with `writer`. */
export type Serve = (number: number, request: EngineRequest, writer: FrameSink) => void;

/**
 * A thread's own socket for bus calls sent straight from other actor threads (its peers), so a
 * call between two APIs crosses one socket each way instead of going through the router twice. A
 * peer proves it is an actor thread of this instance with the cell token in its hello, like a
 * thread dialling the router. The router decides who may call whom: it hands out this address
 * only after routing a bus call to this thread's API, and tells the thread to stop (`stop`) once
 * the API is superseded, disabled or the thread retires. A call that arrives after that is not
 * run: it goes back to the caller, who sends it through the router (to the API's current release,
 * or to a 404).
 */
export class PeerServer {
  private readonly server: ThreadServer;
  private readonly connections = new Set<{ writer: FrameSink }>();
  private stopped = false;

  constructor(
    readonly address: string,
    token: string,
    serve: Serve,
    /** A peer connection closed (a retiring thread waits for all of them). */
    private readonly onClosed: () => void,
    /** A peer that speaks another wire version was refused. */
    onWrongVersion: WrongVersion,
  ) {
    this.server = new ThreadServer(address, token, onWrongVersion, (_hello, conduit, reader) => {
      const connection = { writer: conduit.writer };
      if (this.stopped) connection.writer.write(emptyFrame(FrameType.Retire));
      this.connections.add(connection);
      reader.replace((type, payload) => {
        if (type !== FrameType.Request) return;
        const { number, request } = decodeRequest(payload);
        // Stopped (the API was superseded): the caller sends it through the router instead.
        if (this.stopped) connection.writer.write(notTakenFrame(number));
        else serve(number, request, connection.writer);
      });
      conduit.onClose(() => {
        this.connections.delete(connection);
        this.onClosed();
      });
    });
  }

  get open(): number {
    return this.connections.size;
  }

  /** Listens; a failure only means peers call through the router. */
  listen(): Promise<boolean> {
    return this.server.listen().then(
      () => true,
      () => false,
    );
  }

  /**
   * Takes no new peers, and tells each connected one to send no more calls; the calls already sent
   * are still answered, and each peer closes its connection once it has its answers.
   */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.server.stopListening();
    for (const { writer } of this.connections) writer.write(emptyFrame(FrameType.Retire));
  }

  /** Closes every connection now (the thread exits). */
  close(): void {
    this.stop();
    this.server.close();
  }
}
