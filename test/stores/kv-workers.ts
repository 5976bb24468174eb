import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { KvBackendOptions } from '../../src/engine/kv-store.js';

const workerFile = new URL('./kv-worker.mjs', import.meta.url);
const compiledStore = fileURLToPath(new URL('../../dist/directives/stores/open-kv.js', import.meta.url));

export interface IncrementRace {
  /** How each worker opens its own backend on the shared store. */
  options: KvBackendOptions;
  ns: string;
  key: string;
  /** Concurrent increments by 1 per worker. */
  count: number;
  ttlMs: number;
}

/**
 * Starts `workers` worker threads (kv-worker.mjs), each opening its own backend; once all are
 * ready, tells them at once to run `count` concurrent increments each. Returns each worker's values.
 * The workers load the compiled store from dist/: it needs `npx tsc -p tsconfig.build.json` first
 * (`npm test` builds in pretest).
 */
export async function raceIncrements(workers: number, race: IncrementRace): Promise<number[][]> {
  if (!existsSync(compiledStore)) {
    throw new Error(
      `the worker-thread tests load ${compiledStore}: build first with \`npx tsc -p tsconfig.build.json\` (npm test does it in pretest)`,
    );
  }
  const started: Worker[] = [];
  try {
    const ready: Array<Promise<void>> = [];
    const done: Array<Promise<number[]>> = [];
    for (let i = 0; i < workers; i++) {
      const worker = new Worker(workerFile, { workerData: race });
      started.push(worker);
      let signalReady!: () => void;
      ready.push(new Promise<void>((resolve) => (signalReady = resolve)));
      done.push(
        new Promise<number[]>((resolve, reject) => {
          worker.on('message', (message: { ready?: boolean; values?: number[]; error?: string }) => {
            if (message.ready) signalReady();
            else if (message.values) resolve(message.values);
            else reject(new Error(`worker ${i}: ${message.error}`));
          });
          worker.on('error', reject);
          worker.on('exit', (code) => reject(new Error(`worker ${i} exited with code ${code} before answering`)));
        }),
      );
    }
    // A worker that fails before "ready" rejects `done`; watch both so the test never hangs.
    await Promise.race([Promise.all(ready), Promise.all(done)]);
    for (const worker of started) worker.postMessage('go');
    return await Promise.all(done);
  } finally {
    await Promise.all(started.map((worker) => worker.terminate()));
  }
}
