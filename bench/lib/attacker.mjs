// A hostile client in a process of its own (bench/edges.mjs), so its work does not delay the
// probe's clock: sends one request (argv[2], JSON: port, method, path, host, headers, and the body
// in base64 or a deep JSON body of `deepLevels`) again as soon as it is answered, until SIGTERM;
// then prints [{ status, ms }] as JSON and exits.
import http from 'node:http';

const spec = JSON.parse(process.argv[2]);
const body = spec.deepLevels
  ? Buffer.from(`{"a":${'['.repeat(spec.deepLevels)}${']'.repeat(spec.deepLevels)}}`)
  : spec.body
    ? Buffer.from(spec.body, 'base64')
    : null;
const results = [];
let running = true;
process.on('SIGTERM', () => (running = false));

function once() {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const headers = { host: spec.host, ...spec.headers, ...(body === null ? {} : { 'content-length': body.length }) };
    const req = http.request(
      { host: '127.0.0.1', port: spec.port, method: spec.method, path: spec.path, agent: false, headers },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - t0 }));
      },
    );
    req.on('error', (error) => resolve({ status: 0, ms: performance.now() - t0, error: error.message }));
    req.end(body ?? undefined);
  });
}

while (running) results.push(await once());
process.stdout.write(JSON.stringify(results));
