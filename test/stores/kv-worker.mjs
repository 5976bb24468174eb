// A worker thread of the key-value store tests: opens its own backend on the shared store (the
// compiled dist/, since a worker cannot load .ts: build first with `npx tsc -p tsconfig.build.json`,
// which `npm test` does in pretest), says "ready", then on "go" runs `count` concurrent increments
// of `key` in namespace `ns` and posts back the values they returned.
import { parentPort, workerData } from 'node:worker_threads';
import { openKvBackend } from '../../dist/directives/stores/open-kv.js';

const { options, ns, key, count, ttlMs } = workerData;
let backend;
try {
  backend = openKvBackend(options);
} catch (error) {
  parentPort.postMessage({ error: String(error?.stack ?? error) });
}
if (backend) {
  const store = backend.namespace(ns);
  parentPort.once('message', async () => {
    try {
      const results = await Promise.all(Array.from({ length: count }, () => store.increment(key, 1, ttlMs)));
      parentPort.postMessage({ values: results.map((r) => r.value) });
    } catch (error) {
      parentPort.postMessage({ error: String(error?.stack ?? error) });
    } finally {
      await backend.close();
    }
  });
  parentPort.postMessage({ ready: true });
}
