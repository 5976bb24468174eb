import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANVIL_BIN } from '../helpers/instance.js';

// README.md's "A five-minute walkthrough", run as written: each line of its sh block in turn, in a
// fresh folder, against an instance started as `npm start` starts it (the example APIs of apis/,
// --publish, ./data). Two things are substituted: the port (8080 → the instance's free port) and
// `npx anvil` (→ `node bin/anvil.js`, the same program without npx's own start-up). What the README
// shows as a command's output is checked: a trailing `# {…}` is the JSON body, `# 404` the status,
// `# deployed …` / `# valid …` / `# rolled back …` / `# 4 case(s) …` the command's output (`…` stands for anything),
// and `# …` lines right below a command what it prints on stderr. Other comments are prose.

const ROOT = join(import.meta.dirname, '..', '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

interface Step {
  line: number;
  command: string;
  /** The trailing comment, when it shows output. */
  expected: string | null;
  /** The comment lines below the command: its stderr. */
  stderr: string[];
}

const OUTPUT = /^(\{.*\}|\d{3}\b.*|\d+ case\(s\) .*|(deployed|valid|published|rolled back|disabled) .*)$/;

function walkthroughSteps(): Step[] {
  const start = README.indexOf('## A five-minute walkthrough');
  const section = README.slice(0, README.indexOf('\n## ', start));
  const steps: Step[] = [];
  for (let open = section.indexOf('```sh\n', start); open !== -1; open = section.indexOf('```sh\n', open)) {
    open += '```sh\n'.length;
    const lines = section.slice(open, section.indexOf('\n```', open)).split('\n');
    const firstLine = section.slice(0, open).split('\n').length;
    for (let i = 0; i < lines.length; i++) {
      const text = lines[i]!;
      if (text.trim() === '') continue;
      if (text.startsWith('#')) {
        const previous = steps.at(-1);
        if (
          previous !== undefined &&
          lines[i - 1]!.trim() !== '' &&
          (previous.stderr.length > 0 || /^# error\b/.test(text))
        )
          previous.stderr.push(text.replace(/^# ?/, ''));
        continue;
      }
      const line = firstLine + i;
      let command = text;
      while (command.endsWith('\\')) command = `${command.slice(0, -1)} ${lines[++i]!.trimStart()}`;
      const heredoc = /<<(\w+)\s*$/.exec(command);
      if (heredoc !== null) while (lines[i] !== heredoc[1]) command += `\n${lines[++i]}`;
      const comment = /\s{2,}#\s(.*)$/.exec(command);
      const expected = comment !== null && OUTPUT.test(comment[1]!.trim()) ? comment[1]!.trim() : null;
      steps.push({ line, command: comment === null ? command : command.slice(0, comment.index), expected, stderr: [] });
    }
  }
  return steps;
}

const wildcard = (text: string) =>
  new RegExp(
    text
      .split('…')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*'),
  );

/** The folder the walkthrough runs in (its ./data is the instance's data dir). */
let folder = '';
let instance: ChildProcess;
let port = 0;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'anvil-readme-'));
  instance = spawn(
    process.execPath,
    [ANVIL_BIN, 'start', '--apis', join(ROOT, 'apis'), '--publish', '--port', '0', '--spare-threads', '0'],
    { cwd: folder, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let logs = '';
  port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the instance did not start:\n${logs}`)), 60_000);
    instance.stdout!.on('data', (chunk: Buffer) => {
      logs += chunk.toString();
      const match = /"port":(\d+)[^\n]*"msg":"listening"/.exec(logs);
      if (match !== null) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    instance.stderr!.on('data', (chunk: Buffer) => (logs += chunk.toString()));
  });
}, 90_000);

afterAll(async () => {
  if (instance.exitCode === null) {
    const exited = new Promise((resolve) => instance.once('exit', resolve));
    instance.kill('SIGTERM');
    await exited;
  }
  rmSync(folder, { recursive: true, force: true });
});

describe('README walkthrough', () => {
  it('runs as written and prints what the README shows', () => {
    const steps = walkthroughSteps();
    expect(steps.length).toBeGreaterThan(20);
    const env: Record<string, string> = { PATH: process.env.PATH!, HOME: folder, NO_COLOR: '1' };
    // Shell variables a line sets (ADMIN=(…)) are set again before each later line.
    const assignments: string[] = [];
    for (const step of steps) {
      const curl = /^curl\b/.test(step.command);
      if (/^[A-Z_]+=/.test(step.command)) assignments.push(step.command);
      let command = [...assignments, step.command]
        .join('\n')
        .replaceAll('localhost:8080', `localhost:${port}`)
        .replaceAll('npx anvil', `node ${ANVIL_BIN}`);
      // The status after the body, on a line of its own, for the expected status (curl -i prints it too).
      if (curl) command += ` -s -w '\\n%{http_code}'`;
      // A followed log never ends by itself: what it printed in two seconds is the answer.
      const follows = curl && step.command.includes('follow=1');
      if (follows) command += ' --max-time 2';
      const ran = spawnSync('bash', ['-c', command], { cwd: folder, env, encoding: 'utf8', timeout: 60_000 });
      const where = `README.md:${step.line}: ${step.command}\nstdout: ${ran.stdout}\nstderr: ${ran.stderr}`;
      if (step.stderr.length > 0) {
        expect(ran.status, where).not.toBe(0);
        for (const line of step.stderr) expect(ran.stderr, where).toMatch(wildcard(line));
        continue;
      }
      expect(ran.status, where).toBe(follows ? 28 : 0);
      if (step.expected === null) continue;
      if (curl) {
        const cut = ran.stdout.lastIndexOf('\n');
        const body = ran.stdout.slice(0, cut);
        const status = ran.stdout.slice(cut + 1);
        if (step.expected.startsWith('{')) {
          expect(status, where).toBe('200');
          expect(isDeepStrictEqual(JSON.parse(body), JSON.parse(step.expected)), where).toBe(true);
        } else expect(status, where).toBe(step.expected.slice(0, 3));
      } else expect(ran.stdout + ran.stderr, where).toMatch(wildcard(step.expected));
    }
  }, 240_000);
});
