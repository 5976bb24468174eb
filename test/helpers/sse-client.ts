import { request, type IncomingMessage } from 'node:http';
import { waitFor } from './wait-for.js';

/** A client of a Server-Sent Events stream that reads as fast as it can and keeps every event's data. */
export interface SseClient {
  status: number;
  headers: IncomingMessage['headers'];
  /** The `data:` of each event so far, in order. */
  readonly events: string[];
  /** The body as it came, when the answer was not a stream (an error). */
  readonly text: () => string;
  /** Resolves with the first event whose data passes `match` (waiting up to `timeoutMs`). */
  next(match: (data: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Resolves once the server has ended the stream. */
  readonly ended: Promise<void>;
  close(): void;
}

export function openSse(
  port: number,
  path: string,
  host: string,
  headers: Record<string, string> = {},
): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, headers: { host, accept: 'text/event-stream', ...headers }, agent: false },
      (res) => {
        const events: string[] = [];
        let buffered = '';
        let raw = '';
        res.setEncoding('utf8');
        const ended = new Promise<void>((done) => res.once('close', () => done()));
        res.on('data', (chunk: string) => {
          raw += chunk.length < 65_536 && raw.length < 65_536 ? chunk : '';
          buffered += chunk;
          let at: number;
          while ((at = buffered.indexOf('\n\n')) >= 0) {
            const event = buffered.slice(0, at);
            buffered = buffered.slice(at + 2);
            const data = event
              .split('\n')
              .filter((l) => l.startsWith('data: '))
              .map((l) => l.slice(6));
            if (data.length > 0) events.push(data.join('\n'));
          }
        });
        res.on('error', () => {});
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          events,
          text: () => raw,
          next: (match, timeoutMs = 10_000) =>
            waitFor(() => events.find(match), { what: `an event matching ${match.toString()}`, timeoutMs }),
          ended,
          close: () => req.destroy(),
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}
