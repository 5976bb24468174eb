// A client in a process of its own (bench/edges-ii/connections.mjs) that opens connections as fast
// as it can and leaves each with a request head cut short (half-open to node:http), keeping every
// one the server leaves open, until SIGTERM; then prints JSON: connections opened, closed by the
// server with an answer (a refusal: 429 or 503) or without one (evicted, or refused past the
// router's answers a second), failed to connect, and the most it held open at once (connected as
// this side sees it: accepted by the router, or still waiting in its accept queue). argv[2], JSON: { port, addresses (local addresses to connect from, in
// turn), pending (connects in flight at once), hold (most connections kept, below this process's
// own open-files limit) }.
import net from 'node:net';

const { port, addresses, pending, hold } = JSON.parse(process.argv[2]);
const HEAD = 'GET /bare/ping HTTP/1.1\r\nHost: localhost\r\nX-Slow: 1\r\n';
const counts = { opened: 0, answered: 0, closedUnanswered: 0, connectFailed: 0, heldMax: 0 };
let held = 0;
let inFlight = 0;
let next = 0;
let running = true;

function open() {
  if (!running || held + inFlight >= hold) return;
  inFlight++;
  const socket = net.connect({ port, host: '127.0.0.1', localAddress: addresses[next++ % addresses.length] });
  let connected = false;
  let answered = false;
  socket.on('connect', () => {
    connected = true;
    inFlight--;
    held++;
    counts.opened++;
    counts.heldMax = Math.max(counts.heldMax, held);
    socket.write(HEAD);
    open();
  });
  socket.on('data', () => (answered = true));
  socket.on('error', () => {});
  socket.on('close', () => {
    if (!connected) {
      inFlight--;
      counts.connectFailed++;
      // Ephemeral ports or the backlog ran out: a moment's pause, not a spin.
      setTimeout(open, 5);
      return;
    }
    held--;
    if (answered) counts.answered++;
    else if (running) counts.closedUnanswered++;
    open();
  });
}

for (let i = 0; i < pending; i++) open();
process.on('SIGTERM', () => {
  running = false;
  process.stdout.write(JSON.stringify(counts), () => process.exit(0));
});
