import { spawnSync } from 'node:child_process';

/**
 * `anvil test` and `anvil deploy --test` run isolates in the CLI's own process: on Node 20 and
 * later isolated-vm needs that process started with `--no-node-snapshot` (as the cells are, with
 * the cells' other flags), which cannot be set once it runs. Without it, the command runs itself
 * again with the flags and exits with that run's code. Returns when no second run is needed.
 */
export async function runWithIsolateFlags(argv: readonly string[]): Promise<void> {
  const [, , command, ...rest] = argv;
  const runsIsolates = command === 'test' || (command === 'deploy' && rest.includes('--test'));
  if (!runsIsolates || process.execArgv.includes('--no-node-snapshot')) return;
  const { CELL_NODE_FLAGS } = await import('../cell/process/cell-supervisor.js');
  const again = spawnSync(process.execPath, [...CELL_NODE_FLAGS, ...process.execArgv, ...argv.slice(1)], {
    stdio: 'inherit',
  });
  process.exit(again.status ?? 1);
}
