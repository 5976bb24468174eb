/**
 * `anvil test`: every case of an API folder's `tests/*.yaml`, one after the other, each on a fresh
 * actor (api-under-test.ts). A case stops at its first step whose answer differs from its `expect`.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { formatConfigError } from '../shared/api-model/types.js';
import type { LinePosition } from '../deploy/api-yaml/yaml-positions.js';
import { ApiUnderTest } from './api-under-test.js';
import { compareAnswer, type Mismatch } from './expectations.js';
import { TestClock } from './test-clock.js';
import { readTestFile, type TestCase } from './test-file.js';
import type { AnsweredRequest, LoggedLine } from './test-runtime.js';

export const TESTS_DIR = 'tests';

export interface CaseFailure {
  /** `tests/notes.yaml:12:5`: the step that failed. */
  at: string;
  /** `GET /notes/7`, or what went wrong before any answer. */
  step: string;
  mismatches: Mismatch[];
  answer: AnsweredRequest | null;
  error?: string;
}

export interface CaseResult {
  name: string;
  file: string;
  at: LinePosition;
  ms: number;
  failure: CaseFailure | null;
  /** The instance-log lines the case's actor wrote (directive errors, refused mocks). */
  lines: LoggedLine[];
}

export interface TestRun {
  files: string[];
  /** Test files or folder compilations that could not be read (each `file:line:col message`). */
  errors: string[];
  cases: CaseResult[];
  ms: number;
}

export interface RunOptions {
  /** Only the cases whose name contains this. */
  filter?: string;
  /** The env of files that name none (default dev). */
  env?: string;
}

/** The test files of the folder: `tests/*.yaml` and `tests/*.yml`, by name. */
export async function testFiles(folder: string): Promise<string[]> {
  const dir = join(folder, TESTS_DIR);
  if (!existsSync(dir)) return [];
  return (await readdir(dir))
    .filter((name) => /\.ya?ml$/.test(name))
    .sort()
    .map((name) => `${TESTS_DIR}/${name}`);
}

export async function runTests(folder: string, options: RunOptions = {}): Promise<TestRun> {
  const started = performance.now();
  const files = await testFiles(folder);
  const run: TestRun = { files, errors: [], cases: [], ms: 0 };
  const api = new ApiUnderTest(folder);
  const cases: TestCase[] = [];
  for (const file of files) {
    const reading = readTestFile(await readFile(join(folder, file), 'utf8'), file, {
      env: options.env ?? 'dev',
      now: Date.now(),
    });
    if (!reading.ok) run.errors.push(...reading.errors.map(formatConfigError));
    else cases.push(...reading.cases.filter((c) => options.filter === undefined || c.name.includes(options.filter)));
  }
  const refusedEnvs = new Set<string>();
  for (const testCase of cases) {
    const compiled = await api.compile(testCase.env);
    if (!compiled.ok) {
      if (!refusedEnvs.has(testCase.env))
        run.errors.push(`the API is not valid for env ${testCase.env}:`, ...compiled.errors.map((e) => `  ${e}`));
      refusedEnvs.add(testCase.env);
      continue;
    }
    run.cases.push(await runCase(api, testCase, compiled.release));
  }
  run.ms = performance.now() - started;
  return run;
}

async function runCase(
  api: ApiUnderTest,
  testCase: TestCase,
  release: Parameters<ApiUnderTest['start']>[0],
): Promise<CaseResult> {
  const started = performance.now();
  const result: CaseResult = {
    name: testCase.name,
    file: testCase.file,
    at: testCase.at,
    ms: 0,
    failure: null,
    lines: [],
  };
  const place = (at: LinePosition) => `${testCase.file}:${at.line}:${at.column}`;
  const clock = new TestClock(testCase.clock);
  let actor;
  try {
    actor = await api.start(release, { clock, fixtures: testCase.fixtures, mocks: testCase.mocks });
  } catch (error) {
    result.failure = {
      at: place(testCase.at),
      step: 'fixtures',
      mismatches: [],
      answer: null,
      error: (error as Error).message,
    };
    result.ms = performance.now() - started;
    return result;
  }
  try {
    for (const step of testCase.steps) {
      if (step.kind === 'advance') {
        clock.advance(step.ms);
        continue;
      }
      const shown = `${step.request.verb} ${step.request.path}${step.request.query === '' ? '' : `?${step.request.query}`}`;
      let answer: AnsweredRequest;
      try {
        answer = await actor.send(step.request);
      } catch (error) {
        result.failure = {
          at: place(step.at),
          step: shown,
          mismatches: [],
          answer: null,
          error: (error as Error).message,
        };
        break;
      }
      const mismatches = compareAnswer(step.expect, answer);
      if (mismatches.length > 0) {
        result.failure = { at: place(step.at), step: shown, mismatches, answer };
        break;
      }
    }
  } finally {
    result.lines = actor.runtime.lines;
    try {
      await actor.close();
    } catch (error) {
      result.failure ??= {
        at: place(testCase.at),
        step: 'closing the actor',
        mismatches: [],
        answer: null,
        error: (error as Error).message,
      };
    }
  }
  result.ms = performance.now() - started;
  return result;
}
