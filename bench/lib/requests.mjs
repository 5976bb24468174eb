// One HTTP request on a new connection, and a client process that repeats one: what the edge
// benchmarks (edges.mjs, edges-ii/) send as the tenant or its operator.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import { join } from 'node:path';
import { BENCH_DIR } from './instance.mjs';

/** One request on a new connection; resolves to { status, ms, body } (status 0 when the connection failed, body its message). */
export function request(port, { method = 'GET', path, host = 'localhost', headers = {}, body = null }) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: { host, ...headers, ...(body === null ? {} : { 'content-length': body.length }) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - t0, body: text }));
      },
    );
    req.on('error', (error) => resolve({ status: 0, ms: performance.now() - t0, body: error.message }));
    req.end(body ?? undefined);
  });
}

/** The same to the admin host (the management API: `headers` carry the public host's name and key). */
export function adminRequest(port, method, path, headers = {}, body = null) {
  return request(port, { method, path, host: 'admin.localhost', headers, body });
}

/** Starts lib/attacker.mjs (repeats one request as soon as it is answered); stop() ends it and resolves to its [{ status, ms }]. */
export function attacker(spec) {
  const child = spawn(process.execPath, [join(BENCH_DIR, 'lib', 'attacker.mjs'), JSON.stringify(spec)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const exited = once(child, 'exit');
  return {
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      return JSON.parse(out || '[]');
    },
  };
}
