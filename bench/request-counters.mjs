// Issue 26: what counting one request costs the router, in its process, without HTTP: the
// Prometheus meters (anvil_requests_total and the latency histogram, RequestMeters) and the rolling
// windows of the operator endpoints (LiveFigures), each on its own, over 8 APIs × 3 routes. Also
// reports the heap growth over the measured calls (the windows must not allocate per request).
// Not in `npm run bench`: a microbenchmark, to compare before and after a change to the counting.
//
//   npm run build && node bench/request-counters.mjs
import { Registry } from 'prom-client';
import { LiveFigures } from '../dist/front/meters/live-figures.js';
import { RequestMeters } from '../dist/front/meters/request-meters.js';

const CALLS = Number(process.env.BENCH_COUNTER_CALLS ?? 3_000_000);
const apis = Array.from({ length: 8 }, (_, i) => `api-${i}`);
const routes = ['get /ping', 'get /users/{id}', 'post /items'];

function measure(label, count) {
  for (let i = 0; i < 200_000; i++) count(i);
  const heapBefore = process.memoryUsage().heapUsed;
  const started = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) count(i);
  const ns = Number(process.hrtime.bigint() - started) / CALLS;
  const heapKiB = (process.memoryUsage().heapUsed - heapBefore) / 1024;
  console.log(
    `${label.padEnd(34)} ${ns.toFixed(1).padStart(7)} ns/request   heap ${heapKiB >= 0 ? '+' : ''}${heapKiB.toFixed(0)} KiB over ${CALLS.toLocaleString('en')} calls`,
  );
}

const meters = new RequestMeters(new Registry());
const live = new LiveFigures();
for (let round = 1; round <= 3; round++) {
  console.log(`round ${round}`);
  measure('RequestMeters.observe (metrics)', (i) =>
    meters.observe('localhost', apis[i & 7], routes[i % 3], 200, 0.0012),
  );
  measure('LiveFigures.request (windows)', (i) =>
    live.request('localhost', apis[i & 7], routes[i % 3], i % 50 === 0 ? 503 : 200, 0.0012),
  );
}
