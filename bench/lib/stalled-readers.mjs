// Clients of a large answer for the response-path phases of bench/edges-ii (issue 41): one that
// asks and never reads, one that reads at a fixed rate; and the router's RSS.
import net from 'node:net';
import { readFileSync } from 'node:fs';

/**
 * Asks for `path`, takes the first chunk of the answer and reads no more (the kernel's buffers
 * fill, then the server must hold the rest); `headed` resolves once that chunk came, `finish()`
 * reads on for a while and closes: { status (0: none came), bytes }.
 */
export function stalledReader(port, path) {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
  const chunks = [];
  const closed = new Promise((resolve) => socket.once('close', resolve));
  const headed = new Promise((resolve) => {
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      if (chunks.length === 1) {
        socket.pause();
        resolve();
      }
    });
    socket.once('close', resolve);
  });
  return {
    headed,
    async finish(ms = 2_000) {
      socket.resume();
      await Promise.race([closed, new Promise((r) => setTimeout(r, ms))]);
      socket.destroy();
      const all = Buffer.concat(chunks);
      return { status: Number(all.subarray(9, 12).toString('latin1')) || 0, bytes: all.length };
    },
    destroy: () => socket.destroy(),
  };
}

/** Downloads `path` at about `bytesPerSecond`: { status, contentLength, received, ms } once the server closed. */
export function throttledDownload(port, path, bytesPerSecond) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const started = performance.now();
    const chunks = [];
    let taken = 0;
    socket.on('error', () => {});
    socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      taken += chunk.length;
      const ahead = taken / bytesPerSecond - (performance.now() - started) / 1000;
      if (ahead > 0) {
        socket.pause();
        setTimeout(() => socket.resume(), ahead * 1000);
      }
    });
    socket.once('close', () => {
      const all = Buffer.concat(chunks);
      const headEnd = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, Math.max(0, headEnd)).toString('latin1');
      resolve({
        status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0),
        contentLength: Number(/content-length: (\d+)/i.exec(head)?.[1] ?? -1),
        received: headEnd < 0 ? 0 : all.length - headEnd - 4,
        ms: performance.now() - started,
      });
    });
  });
}

/** The resident memory of process `pid`, MiB. */
export function rssMiB(pid) {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
}
