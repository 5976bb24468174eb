// Issue 41, case 8: status 101 sent as a final answer. A directive set `status = 101` with a body;
// it went out with `content-length: 1` and no body byte, and a keep-alive client mis-framed the
// next answer. Now the answer is a 500 (ANVIL_ERR_INFORMATIONAL_STATUS). Measured: one keep-alive
// connection asking for it again and again, each answer read by its content-length, and whether
// the next one starts with a status line; a neighbour at 200 req/s meanwhile.
import net from 'node:net';
import { startAnvil } from '../lib/instance.mjs';
import { openLoop } from '../lib/load.mjs';
import { fmt } from '../lib/targets.mjs';

const RATE = 200;

export async function phase({ seconds }) {
  const anvil = await startAnvil({ apis: [{ from: 'bare' }, { from: 'informational' }], readyPath: '/bare/ping' });
  try {
    const neighbour = anvil.url('/bare/ping');
    await openLoop(neighbour, { rate: RATE, seconds: 1, warmup: 0 });
    const probing = openLoop(neighbour, { rate: RATE, seconds, warmup: 0 });
    const answers = await keepAliveAnswers(anvil.port, '/informational/switch', seconds * 1000);
    const probe = await probing;
    const statuses = [...new Set(answers.statuses)].sort().join('/');
    return {
      case: 8,
      name: 'status 101 sent as a final answer',
      measured: `${answers.statuses.length} answers on one keep-alive connection (${statuses}), ${answers.misframed} mis-framed`,
      target: 'no 1xx final answer, 0 mis-framed',
      met: answers.misframed === 0 && answers.statuses.length > 0 && answers.statuses.every((s) => s >= 200),
      neighbourP99Ms: probe.p99,
      neighbourErrors: probe.errors,
      notes: [
        `neighbour GET /bare/ping at ${RATE} req/s for ${seconds} s meanwhile: p50 ${fmt(probe.p50, 2)} ms, p99 ${fmt(probe.p99, 2)} ms, ${probe.errors} errors`,
      ],
    };
  } finally {
    await anvil.stop();
  }
}

/** GET `path` on one connection, one request after the other, for `ms`; each answer framed by its content-length. */
function keepAliveAnswers(port, path, ms) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const end = performance.now() + ms;
    const statuses = [];
    let misframed = 0;
    let buffer = '';
    // An answer whose content-length promises bytes that never come (a 101 did) is one mis-framed.
    let stalled;
    const ask = () => {
      clearTimeout(stalled);
      stalled = setTimeout(() => {
        socket.destroy();
        resolve({ statuses, misframed: misframed + 1 });
      }, 2_000);
      socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    };
    socket.setEncoding('latin1');
    socket.on('connect', ask);
    socket.on('data', (chunk) => {
      buffer += chunk;
      for (;;) {
        const at = buffer.indexOf('\r\n\r\n');
        if (at < 0) return;
        const head = buffer.slice(0, at);
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffer.length < at + 4 + length) return;
        buffer = buffer.slice(at + 4 + length);
        const status = /^HTTP\/1\.1 (\d{3}) /.exec(head);
        if (status === null) {
          clearTimeout(stalled);
          misframed++;
          socket.destroy();
          return resolve({ statuses, misframed });
        }
        statuses.push(Number(status[1]));
        if (performance.now() >= end) {
          clearTimeout(stalled);
          socket.destroy();
          return resolve({ statuses, misframed });
        }
        ask();
      }
    });
    socket.on('error', () => resolve({ statuses, misframed: misframed + 1 }));
  });
}
