// The floor of Anvil's shape, for comparison: a node:http server that hands each request to a
// child process over a Unix socket as a length-prefixed frame (batched per event-loop turn) and
// writes the child's answer back. No hosts, no mailboxes, no engine: what the hop alone costs.
// With --thread the child answers from a worker thread that holds the socket itself, as an Anvil
// actor thread does (router → cell process → thread): the whole shape, still without Anvil's code.
// Usage: node bench/socket-hop-floor.mjs [port=18182] [--thread]
import { fork } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { Worker, isMainThread, workerData } from 'node:worker_threads';

/** Calls onFrame(id, payload) for each [u32 length][u32 id][payload] frame of a byte stream. */
function frameReader(onFrame) {
  let pending = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
    let offset = 0;
    while (pending.length - offset >= 8) {
      const length = pending.readUInt32LE(offset);
      if (pending.length - offset < 4 + length) break;
      onFrame(pending.readUInt32LE(offset + 4), pending.subarray(offset + 8, offset + 4 + length));
      offset += 4 + length;
    }
    pending = pending.subarray(offset);
  };
}

/** Queues frames and writes them in one batch at the end of the event-loop turn. */
function frameWriter(socket) {
  let queue = [];
  return (id, payload) => {
    const frame = Buffer.allocUnsafe(8 + Buffer.byteLength(payload));
    frame.writeUInt32LE(frame.length - 4, 0);
    frame.writeUInt32LE(id, 4);
    frame.write(payload, 8);
    if (queue.push(frame) === 1) {
      setImmediate(() => {
        socket.write(queue.length === 1 ? queue[0] : Buffer.concat(queue));
        queue = [];
      });
    }
  };
}

/** The child's side: answers every frame of the socket `name` with the same JSON. */
function answer(name) {
  const socket = net.connect(`\0${name}`);
  const send = frameWriter(socket);
  socket.on(
    'data',
    frameReader((id) => send(id, '{"message":"pong"}')),
  );
}

if (!isMainThread) {
  answer(workerData);
} else if (process.argv[2] === '--child') {
  if (process.argv.includes('--thread')) new Worker(new URL(import.meta.url), { workerData: process.argv[3] });
  else answer(process.argv[3]);
} else {
  const port = Number(process.argv.slice(2).find((arg) => !arg.startsWith('--')) ?? 18182);
  const inThread = process.argv.includes('--thread');
  const name = `anvil-hop-floor-${process.pid}`; // an abstract socket: \0 + name
  const waiting = new Map();
  let next = 1;
  let send = null;
  const server = http.createServer((req, res) => {
    const id = next++;
    waiting.set(id, res);
    send(id, JSON.stringify([req.method, req.url, req.rawHeaders]));
  });
  net
    .createServer((socket) => {
      send = frameWriter(socket);
      if (!server.listening) server.listen(port, '127.0.0.1'); // only once the child is there
      socket.on(
        'data',
        frameReader((id, body) => {
          const res = waiting.get(id);
          waiting.delete(id);
          res.writeHead(200, ['content-type', 'application/json', 'content-length', String(body.length)]);
          res.end(body);
        }),
      );
    })
    .listen(`\0${name}`, () => {
      const child = fork(new URL(import.meta.url).pathname, ['--child', name, ...(inThread ? ['--thread'] : [])]);
      process.on('exit', () => child.kill());
      process.on('SIGTERM', () => process.exit(0));
    });
}
