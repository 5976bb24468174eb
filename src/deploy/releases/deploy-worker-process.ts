/**
 * The deploy worker's process (started by deploy-worker.ts): takes one task at a time over its IPC
 * channel and answers with its result. It says it is ready once its modules are loaded and warm (the
 * structure schema compiled, esbuild's service started), so that a deploy's time budget counts the
 * deploy's own work only. A built-in's parameter schema is compiled when a deploy first uses the
 * directive (~3 ms each; all of them up front took ~200 ms of every start, on the path of an
 * instance's first deploy). It runs at the `--nice` it is given, every thread of it and esbuild's
 * service too. Asked to quit, it stops esbuild's service (its own child, which it then reaps) and
 * exits.
 */
import { stop as stopEsbuild } from 'esbuild';
import { numberArg } from '../../cell/process/process-args.js';
import { setThreadsNice } from '../../cell/process/thread-priority.js';
import { checkStructure } from '../api-yaml/api-schema.js';
import { compileDirective } from '../api-yaml/compile-directive.js';
import type { FromDeployWorker, ToDeployWorker } from './deploy-messages.js';
import { stageRelease } from './stage-release.js';

const send = (message: FromDeployWorker): void => {
  process.send!(message);
};

// Before esbuild's service and libuv's pool start: threads and processes made later inherit it.
const nice = numberArg('--nice', 0);
if (nice > 0) setThreadsNice(nice);

checkStructure({});
await compileDirective('Directives/Warm.js', 'export default () => {};');

process.on('message', (message: ToDeployWorker) => {
  if (message.kind === 'quit') {
    // esbuild's stop() kills its process without waiting: a moment for the exit to be reaped here.
    void stopEsbuild().then(() => setTimeout(() => process.exit(0), 100));
    return;
  }
  stageRelease(message.task).then(
    (result) => send({ kind: 'result', result }),
    (error: unknown) =>
      send({ kind: 'failure', message: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  );
});
// The router went away: nothing is waiting for a result.
process.on('disconnect', () => process.exit(0));
send({ kind: 'ready' });
