import { connect, type Socket } from 'node:net';

/**
 * A client that asks for `path`, takes the first chunk of the answer (the head and a little of the
 * body) and then stops reading: its socket's receive window fills up and the server must hold the
 * rest. `readRest()` reads on to the end and tells how much body came.
 */
export interface SlowReader {
  /** Resolves once the head has come. */
  readonly headed: Promise<void>;
  /** Reads on to the end of the connection: the body bytes that came, and the content-length announced. */
  readRest(): Promise<{ status: number; contentLength: number; received: number; body: Buffer }>;
  destroy(): void;
}

export function slowReader(
  port: number,
  path: string,
  host = 'localhost',
  headers: Record<string, string> = {},
): SlowReader {
  const socket: Socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  const chunks: Buffer[] = [];
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const headed = new Promise<void>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (chunks.length === 1) {
        socket.pause();
        resolve();
      }
    });
  });
  const more = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.write(`GET ${path} HTTP/1.1\r\nhost: ${host}\r\n${more}connection: close\r\n\r\n`);
  return {
    headed,
    async readRest() {
      socket.resume();
      await closed;
      const all = Buffer.concat(chunks);
      const headEnd = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, headEnd).toString('latin1');
      return {
        status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0),
        contentLength: Number(/content-length: (\d+)/i.exec(head)?.[1] ?? -1),
        received: all.length - headEnd - 4,
        body: all.subarray(headEnd + 4),
      };
    },
    destroy: () => socket.destroy(),
  };
}
