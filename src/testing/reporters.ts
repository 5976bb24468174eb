/**
 * A test run as a person reads it (each case, and for a failure its file:line, expected against
 * actual, the answer and the actor's log lines), as TAP 13, or as JUnit XML for CI.
 */
import type { CaseFailure, CaseResult, TestRun } from './run-tests.js';

/** How a terminal paints the report (identity functions when it is not one). */
export interface Colours {
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
}

export const REPORTERS = ['human', 'tap', 'junit'] as const;
export type Reporter = (typeof REPORTERS)[number];

export function passedCount(run: TestRun): number {
  return run.cases.filter((c) => c.failure === null).length;
}

export function failedCount(run: TestRun): number {
  return run.cases.length - passedCount(run) + (run.errors.length > 0 ? 1 : 0);
}

/** The lines that explain a failure: where, what differs, what came, what the actor logged. */
export function failureLines(result: CaseResult, failure: CaseFailure): string[] {
  const lines = [`${failure.at} ${failure.step}`];
  if (failure.error !== undefined) lines.push(`error: ${failure.error}`);
  for (const m of failure.mismatches) lines.push(`${m.where}: expected ${m.expected}, got ${m.actual}`);
  if (failure.answer !== null) {
    const body = failure.answer.body.toString('utf8');
    lines.push(`answer: ${failure.answer.status} ${body.length > 300 ? `${body.slice(0, 300)}…` : body}`);
  }
  for (const line of result.lines)
    lines.push(
      `log: ${line.level} ${line.msg}${Object.keys(line.fields).length > 0 ? ` ${JSON.stringify(line.fields)}` : ''}`,
    );
  return lines;
}

export function humanReport(run: TestRun, c: Colours): string[] {
  const lines: string[] = [];
  for (const error of run.errors) lines.push(`${c.red('error')} ${error}`);
  let file = '';
  for (const result of run.cases) {
    if (result.file !== file) lines.push(c.bold((file = result.file)));
    const ms = c.dim(`(${Math.round(result.ms)} ms)`);
    if (result.failure === null) {
      lines.push(`  ${c.green('✓')} ${result.name} ${ms}`);
      continue;
    }
    lines.push(`  ${c.red('✗')} ${result.name} ${ms}`);
    for (const line of failureLines(result, result.failure)) lines.push(`      ${line}`);
  }
  const passed = passedCount(run);
  const failed = run.cases.length - passed;
  if (run.files.length === 0) lines.push('no test files: add tests/<name>.yaml (see docs/testing.md)');
  const summary = `${run.cases.length} case(s) in ${run.files.length} file(s): ${passed} passed, ${failed} failed (${(run.ms / 1000).toFixed(2)} s)`;
  lines.push(failed > 0 || run.errors.length > 0 ? c.red(summary) : c.green(summary));
  return lines;
}

export function tapReport(run: TestRun): string[] {
  const lines = ['TAP version 13', `1..${run.cases.length + (run.errors.length > 0 ? 1 : 0)}`];
  run.cases.forEach((result, i) => {
    const title = `${result.file} › ${result.name}`.replace(/#/g, '\\#');
    if (result.failure === null) return void lines.push(`ok ${i + 1} - ${title}`);
    lines.push(`not ok ${i + 1} - ${title}`, '  ---', ...tapComments(failureLines(result, result.failure)), '  ...');
  });
  if (run.errors.length > 0)
    lines.push(`not ok ${run.cases.length + 1} - test files`, '  ---', ...tapComments(run.errors), '  ...');
  return lines;
}

/** Each line (and each line inside one: an answer's body may hold newlines) as a TAP comment. */
function tapComments(lines: readonly string[]): string[] {
  return lines.flatMap((line) => line.split(/\r?\n/)).map((line) => `  # ${line}`);
}

export function junitReport(run: TestRun): string[] {
  const byFile = new Map<string, CaseResult[]>();
  for (const result of run.cases) byFile.set(result.file, [...(byFile.get(result.file) ?? []), result]);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="anvil test" tests="${run.cases.length + (run.errors.length > 0 ? 1 : 0)}" failures="${failedCount(run)}" time="${seconds(run.ms)}">`,
  ];
  for (const [file, results] of byFile) {
    lines.push(
      `  <testsuite name="${xml(file)}" tests="${results.length}" failures="${results.filter((r) => r.failure !== null).length}">`,
    );
    for (const result of results) {
      const open = `    <testcase classname="${xml(file)}" name="${xml(result.name)}" file="${xml(file)}" line="${result.at.line}" time="${seconds(result.ms)}"`;
      if (result.failure === null) lines.push(`${open}/>`);
      else {
        const first = result.failure.mismatches[0];
        const message =
          result.failure.error ??
          (first === undefined ? 'failed' : `${first.where}: expected ${first.expected}, got ${first.actual}`);
        lines.push(
          `${open}>`,
          `      <failure message="${xml(message)}">${xml(failureLines(result, result.failure).join('\n'))}</failure>`,
          '    </testcase>',
        );
      }
    }
    lines.push('  </testsuite>');
  }
  if (run.errors.length > 0)
    lines.push(
      '  <testsuite name="test files" tests="1" failures="1">',
      `    <testcase name="test files"><failure message="${xml(run.errors[0]!)}">${xml(run.errors.join('\n'))}</failure></testcase>`,
      '  </testsuite>',
    );
  lines.push('</testsuites>');
  return lines;
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

function xml(text: string): string {
  // Control characters other than tab and newline cannot appear in XML 1.0 at all.
  // eslint-disable-next-line no-control-regex -- XML 1.0 has no place for these control characters.
  const NOT_IN_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g;
  return text
    .replace(NOT_IN_XML, '\ufffd')
    .replace(/[<>&"']/g, (ch) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[ch]!);
}
