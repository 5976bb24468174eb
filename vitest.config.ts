import { defineConfig } from 'vitest/config';

/**
 * Two projects, run one after the other: `unit` (pure parts, no instance: `npx vitest run --project unit`, a few seconds) and
 * `integration` (real instances, Redis, SQLite files, isolates over loopback HTTP).
 */
export default defineConfig({
  test: {
    // Builds dist/ first when the sources are newer (a plain `npx vitest` after an edit).
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // vitest's default on two cores is one file at a time; most of an integration test's time is
    // spent waiting on its instance (start, drain, timeouts), so files overlap well. Two, not
    // three: with ~120 files, three instances (each a router, cells and threads) at once on two
    // cores pushed timing-bound tests (request timeouts, thread scaling) past their limits.
    maxWorkers: 2,
    // The integration files share their worker process (isolate: false): each starts its own
    // instances and keeps no module state; a new process per file imported vitest, undici and the
    // helpers again each time (vitest's "import" figure: 42–46 s a run, 23–28 s shared).
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], sequence: { groupOrder: 0 } } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: ['test/unit/**'],
          isolate: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
