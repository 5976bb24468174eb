import net from 'node:net';

// Raw HTTP/1.1 over TCP, for requests a normal client refuses to send (repeated Host, bad framing).

export interface RawReply {
  /** Status of the first response, null when none came. */
  status: number | null;
  /** Every status line received (to see that no second, smuggled response came). */
  statusLines: string[];
  /** Body of the first response (up to the next status line, if any). */
  body: string;
  raw: string;
}

export interface ExchangeOptions {
  /** Half-close our side after writing (the server sees EOF). */
  end?: boolean;
  /** Destroy the socket right after writing: nothing is read. */
  destroy?: boolean;
  /**
   * Half-close our side once the server has sent nothing for this long (node:http then gives up a
   * request it was still waiting for, and closes): bounds an exchange with a request left incomplete.
   */
  endWhenIdleMs?: number;
}

/**
 * Sends `payload` on a fresh TCP connection and collects everything until the server closes it.
 * A reset counts as a close: what we received until then is kept.
 */
export function exchange(
  port: number,
  payload: Buffer | string | Array<Buffer | string>,
  options: ExchangeOptions = {},
): Promise<RawReply> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const raw = Buffer.concat(chunks).toString('latin1');
      const statusLines = raw.match(/^HTTP\/1\.[01] \d{3}[^\r\n]*/gm) ?? [];
      const first = /^HTTP\/1\.[01] (\d{3})/.exec(raw);
      const bodyStart = raw.indexOf('\r\n\r\n');
      const rest = bodyStart < 0 ? '' : raw.slice(bodyStart + 4);
      const next = rest.search(/HTTP\/1\.[01] \d{3}/);
      resolve({
        status: first ? Number(first[1]) : null,
        statusLines,
        body: next < 0 ? rest : rest.slice(0, next),
        raw,
      });
    };
    let idle: NodeJS.Timeout | undefined;
    const quiet = () => {
      if (options.endWhenIdleMs === undefined) return;
      clearTimeout(idle);
      idle = setTimeout(() => socket.end(), options.endWhenIdleMs);
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      quiet();
    });
    socket.on('error', finish);
    socket.on('close', () => {
      clearTimeout(idle);
      finish();
    });
    const parts = Array.isArray(payload) ? payload : [payload];
    for (const part of parts) socket.write(part);
    if (options.destroy) socket.destroy();
    else if (options.end) socket.end();
    else quiet();
  });
}
