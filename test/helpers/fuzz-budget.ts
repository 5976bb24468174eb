import type fc from 'fast-check';

// The budget of the fuzz properties (test/unit/fuzz/, test/http/http-edge-fuzz.test.ts). In CI each
// property stops after `ciRuns` inputs or FUZZ_TIME_LIMIT_MS, whichever comes first (an interrupted
// run passes if nothing failed so far). ANVIL_FUZZ_RUNS=<n> runs exactly n inputs per property, with
// no time limit, for a longer search; ANVIL_FUZZ_SEED=<seed> replays a failure fast-check reported.

const FUZZ_TIME_LIMIT_MS = 12_000;

const envRuns = Number(process.env.ANVIL_FUZZ_RUNS ?? '');
const envSeed = Number(process.env.ANVIL_FUZZ_SEED ?? '');
const longRun = Number.isSafeInteger(envRuns) && envRuns > 0;

/** fast-check's parameters for one property. */
export function fuzzParameters<T>(ciRuns: number): fc.Parameters<T> {
  const seed = Number.isSafeInteger(envSeed) && process.env.ANVIL_FUZZ_SEED !== undefined ? { seed: envSeed } : {};
  if (longRun) return { numRuns: envRuns, ...seed };
  return { numRuns: ciRuns, interruptAfterTimeLimit: FUZZ_TIME_LIMIT_MS, ...seed };
}

/** The vitest timeout of a test running one property: the time limit plus room for a slow last input and the shrinking. */
export const FUZZ_TEST_TIMEOUT_MS = longRun ? 24 * 3600_000 : FUZZ_TIME_LIMIT_MS + 18_000;
