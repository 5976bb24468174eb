// A minimal keep-alive HTTP/1.1 client over raw sockets, cheap enough per request to drive a
// server at tens of thousands of requests per second from one JS thread (a generic client such as
// undici spends several times more CPU per request, CPU the server under test needs on a 2-core
// machine). One request in flight per connection (no pipelining). It understands what the servers
// of this suite send: a status line, headers, and a body framed by content-length or chunked.
import net from 'node:net';

/** The bytes of `GET <path>` with the given Host and extra headers, built once and reused. */
export function requestBytes(url, { host, headers = {}, method = 'GET' } = {}) {
  const target = new URL(url);
  let head = `${method} ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${host ?? target.host}\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  return Buffer.from(`${head}\r\n`, 'latin1');
}

const CRLFCRLF = Buffer.from('\r\n\r\n');

/**
 * One connection. `send(bytes, onDone)` writes a request; onDone(error, status, body) is called
 * once per request, in order. A broken connection fails its request and reconnects on next send.
 */
export class Connection {
  /** `localAddress`: the address to connect from (another of 127.0.0.0/8 is another client to the router). */
  constructor(port, hostname = '127.0.0.1', localAddress = undefined) {
    this.port = port;
    this.hostname = hostname;
    this.localAddress = localAddress;
    this.socket = null;
    this.pending = null; // onDone of the request in flight
    this.buffer = null;
    this.status = 0;
    this.bodyStart = -1;
    this.length = -1; // content-length, or -1 when chunked
    this.chunked = false;
  }

  send(bytes, onDone) {
    if (this.socket === null) this.connect();
    this.pending = onDone;
    this.buffer = null;
    this.bodyStart = -1;
    this.socket.write(bytes);
  }

  close() {
    this.socket?.destroy();
    this.socket = null;
  }

  connect() {
    const socket = net.connect({ port: this.port, host: this.hostname, localAddress: this.localAddress });
    socket.setNoDelay(true);
    socket.on('data', (chunk) => this.onData(chunk));
    const broken = (error) => {
      if (this.socket === socket) this.socket = null;
      const done = this.pending;
      this.pending = null;
      done?.(error ?? new Error('connection closed'), 0, null);
    };
    socket.on('error', broken);
    socket.on('close', () => broken(null));
    this.socket = socket;
  }

  onData(chunk) {
    this.buffer = this.buffer === null ? chunk : Buffer.concat([this.buffer, chunk]);
    if (this.bodyStart < 0) {
      const end = this.buffer.indexOf(CRLFCRLF);
      if (end < 0) return;
      this.parseHead(this.buffer.toString('latin1', 0, end));
      this.bodyStart = end + 4;
    }
    const body = this.bodyOf();
    if (body === null) return;
    const done = this.pending;
    this.pending = null;
    this.buffer = null;
    this.bodyStart = -1;
    done?.(null, this.status, body);
  }

  parseHead(head) {
    this.status = Number(head.slice(9, 12));
    this.length = 0;
    this.chunked = false;
    for (const line of head.split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      if (name === 'content-length') this.length = Number(line.slice(colon + 1).trim());
      else if (name === 'transfer-encoding' && /chunked/i.test(line)) this.chunked = true;
    }
  }

  /** The whole body once it has arrived, else null. */
  bodyOf() {
    const buf = this.buffer;
    if (!this.chunked) {
      if (buf.length - this.bodyStart < this.length) return null;
      return buf.subarray(this.bodyStart, this.bodyStart + this.length);
    }
    const parts = [];
    let at = this.bodyStart;
    for (;;) {
      const eol = buf.indexOf('\r\n', at);
      if (eol < 0) return null;
      const size = parseInt(buf.toString('latin1', at, eol), 16);
      if (buf.length < eol + 2 + size + 2) return null;
      if (size === 0) return Buffer.concat(parts);
      parts.push(buf.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
  }
}

/** One request on a fresh or given connection: { status, body, ms }. */
export function requestOnce(connection, bytes) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    connection.send(bytes, (error, status, body) => {
      if (error) reject(error);
      else resolve({ status, body: body.toString('utf8'), ms: performance.now() - t0 });
    });
  });
}
