// Build step (after tsc and build-param-checks): the deploy worker's process as one file,
// dist/deploy/releases/deploy-worker-bundle.mjs, which deploy-worker.ts forks. Every instance starts one
// at boot (and again after a minute without deploys); loaded as tsc's ~180 files plus ajv's and
// yaml's ~150 CommonJS files it took ~600 ms of CPU to be ready, bundled ~400 ms (scratch
// measurement of 2026-11-28, six alternating starts each). Only the deploy worker is bundled: a
// bundled actor thread was slower to be ready than the unbundled one (an earlier measurement).
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const outfile = join(root, 'dist', 'deploy', 'releases', 'deploy-worker-bundle.mjs');

// Modules that find a file next to themselves (`new URL('./x.js', import.meta.url)`) stay outside
// the bundle, imported from their place in dist/, so that the file is found where it is.
const LOCATED = [join(root, 'dist', 'directives', 'database', 'postgres', 'pg-bridge.js')];

const keepLocated = {
  name: 'keep-located-modules',
  setup(plugin) {
    plugin.onResolve({ filter: /^\./ }, (args) => {
      const target = join(args.resolveDir, args.path);
      if (!LOCATED.includes(target)) return undefined;
      return { path: `./${relative(dirname(outfile), target)}`, external: true };
    });
  },
};

await build({
  entryPoints: [join(root, 'dist', 'deploy', 'releases', 'deploy-worker-process.js')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // jsonc-parser's "main" is a UMD build that requires its own files at run time; its ES module build bundles.
  mainFields: ['module', 'main'],
  // Native addons and the drivers of optional services load from node_modules as usual.
  external: ['better-sqlite3', 'esbuild', 'isolated-vm', 'pg', 'ioredis', 'bullmq'],
  // CommonJS code inside an ES module bundle still calls require().
  banner: {
    js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
  },
  plugins: [keepLocated],
  logLevel: 'warning',
});

// A module that finds a file relative to itself would look next to the bundle instead: refuse the
// build rather than ship one that fails when that code runs.
const located = readFileSync(outfile, 'utf8')
  .split('\n')
  .filter(
    (line) =>
      line.includes('import.meta.url') &&
      !/createRequire\w*\(import\.meta\.url\)|__bundleRequire\(import\.meta\.url\)/.test(line),
  );
if (located.length > 0) {
  console.error(
    `bundle-deploy-worker: these lines resolve a path from the bundle's own place; add their module to LOCATED:\n${located.join('\n')}`,
  );
  process.exit(1);
}
