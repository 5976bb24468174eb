/**
 * postinstall: makes isolated-vm count CPU time as CPU time on Linux.
 *
 * isolated-vm measures an isolate's CPU time with the thread's CPU clock on Linux
 * (USE_CLOCK_THREAD_CPUTIME_ID), but its binding.gyp (5.0.x) sets that define in a second
 * `conditions` key of the same target, which the first one overrides: both its prebuilt binary and
 * a plain source build measure wall time instead. Anvil's CPU limit (SPEC §7) would then count the
 * time a thread waited for a core as tenant CPU, and a busy host would fail innocent calls. When
 * the installed binary counts a wait as CPU, this rebuilds it from source with the define.
 */
import { spawnSync } from 'node:child_process';

const WAIT_MS = 50;

/** The CPU time an isolate is charged while its thread sleeps WAIT_MS, in ms (in a child: the module is rebuilt meanwhile). */
function chargedForWaiting() {
  const probe = `
    const ivm = require('isolated-vm');
    const isolate = new ivm.Isolate({ memoryLimit: 8 });
    const context = isolate.createContextSync();
    const before = isolate.cpuTime;
    context.evalSync('Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${WAIT_MS})');
    console.log(Number(isolate.cpuTime - before) / 1e6);`;
  const run = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
  if (run.status !== 0) return null;
  return Number(run.stdout.trim());
}

if (process.platform === 'linux') {
  const charged = chargedForWaiting();
  if (charged === null) {
    console.warn('isolated-vm-cpu-clock: isolated-vm does not load; not checked');
  } else if (charged > WAIT_MS / 2) {
    console.log(`isolated-vm-cpu-clock: isolated-vm charges a ${WAIT_MS} ms wait as ${charged.toFixed(0)} ms of CPU; rebuilding it with the thread CPU clock (about 2 minutes)`);
    // npm_execpath: the npm that runs this script (it knows where Node's headers are, nodedir).
    const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];
    const rebuild = spawnSync(npm[0], [...npm.slice(1), 'rebuild', 'isolated-vm', '--foreground-scripts'], {
      stdio: 'inherit',
      env: { ...process.env, npm_config_build_from_source: 'isolated-vm', CPPFLAGS: `${process.env.CPPFLAGS ?? ''} -DUSE_CLOCK_THREAD_CPUTIME_ID=1`.trim() },
    });
    const after = chargedForWaiting();
    if (rebuild.status !== 0 || after === null || after > WAIT_MS / 2) {
      console.warn('isolated-vm-cpu-clock: the rebuild did not help: CPU limits of custom directives will count time their thread waited (anvil start warns too)');
    } else {
      console.log(`isolated-vm-cpu-clock: rebuilt; a ${WAIT_MS} ms wait is now charged ${after.toFixed(1)} ms of CPU`);
    }
  }
}
