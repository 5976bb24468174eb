// The reference point: a raw node:http server answering the same JSON as Anvil's Ping.
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 18181);
const body = JSON.stringify({ message: 'pong' });
createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}).listen(port, '127.0.0.1', () => process.stdout.write(`raw server on ${port}\n`));
