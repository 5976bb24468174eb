import type { ServerResponse } from 'node:http';
import type { LogFilter } from './log-filter.js';

const HEARTBEAT_MS = 15_000;

/**
 * One client following a log as Server-Sent Events (`data: <the JSON line>`). Writes respect
 * back-pressure: once `res.write` returns false, lines wait here until 'drain'; when what waits
 * here and in the socket's buffer passes `maxBufferedBytes`, the client is too slow and is
 * dropped (its connection closed) instead of growing the router's memory.
 */
export class SseSubscriber {
  private waiting: string[] = [];
  private waitingBytes = 0;
  private blocked = false;
  private closed = false;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    private readonly res: ServerResponse,
    private readonly filter: LogFilter,
    private readonly maxBufferedBytes: number,
    /** Called once when the client leaves or is dropped (`dropped`: it was too slow). */
    private readonly onClose: (dropped: boolean) => void,
  ) {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    });
    res.write(': following the request log\nretry: 2000\n\n');
    res.on('drain', this.drained);
    res.on('close', () => this.close(false));
    this.heartbeat = setInterval(() => this.write(': keep-alive\n\n'), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** A line of the log: sent when it passes the filter. */
  send(line: string): void {
    if (this.closed || !this.filter.matches(line)) return;
    this.write(`data: ${line}\n\n`);
  }

  private write(event: string): void {
    if (this.closed) return;
    if (!this.blocked) {
      this.blocked = !this.res.write(event);
      return;
    }
    this.waiting.push(event);
    this.waitingBytes += Buffer.byteLength(event);
    if (this.waitingBytes + this.res.writableLength > this.maxBufferedBytes) {
      this.close(true);
      this.res.destroy();
    }
  }

  private readonly drained = (): void => {
    if (this.closed || this.waiting.length === 0) {
      this.blocked = false;
      return;
    }
    const text = this.waiting.join('');
    this.waiting = [];
    this.waitingBytes = 0;
    this.blocked = !this.res.write(text);
  };

  /** Ends the stream (the instance drains). */
  end(): void {
    this.close(false);
    this.res.end();
  }

  private close(dropped: boolean): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    this.waiting = [];
    this.waitingBytes = 0;
    this.onClose(dropped);
  }
}
