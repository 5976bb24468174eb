// Build step: the console's chart library (uPlot, from npm) copied into console/vendor/, which the
// router serves as it serves the console's own files. Vendored at build time rather than read from
// node_modules at run time so that the served folder is complete by itself (no path into
// node_modules in the router, nothing fetched from a CDN), at the version the lockfile installed.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = dirname(dirname(fileURLToPath(import.meta.url)));
const vendor = join(root, 'console', 'vendor');
const uplot = dirname(require.resolve('uplot/package.json'));
const { version } = JSON.parse(readFileSync(join(uplot, 'package.json'), 'utf8'));

mkdirSync(vendor, { recursive: true });
copyFileSync(join(uplot, 'dist', 'uPlot.esm.js'), join(vendor, 'uPlot.esm.js'));
copyFileSync(join(uplot, 'dist', 'uPlot.min.css'), join(vendor, 'uPlot.min.css'));
writeFileSync(
  join(vendor, 'VERSIONS.txt'),
  `uplot ${version} (MIT), copied from node_modules by scripts/vendor-console.mjs\n`,
);
