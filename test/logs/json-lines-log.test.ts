import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JsonLinesLog } from '../../src/shared/logs/json-lines-log.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { waitFor } from '../helpers/wait-for.js';

function readLines(dir: string): Array<{ n: number; text: string }> {
  return listed(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean))
    .map((line) => JSON.parse(line) as { n: number; text: string });
}

/** The log files, oldest first (by day, then index). */
function listed(dir: string): string[] {
  const order = (name: string) => {
    const [day, index] = name.split('.');
    return `${day}:${String(/^\d+$/.test(index ?? '') ? index : 0).padStart(6, '0')}`;
  };
  return readdirSync(dir).sort((a, b) => order(a).localeCompare(order(b)));
}

const today = () => new Date().toISOString().slice(0, 10);
const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
/** A line of `n` with text making it exactly 100 bytes (with its newline). */
const line100 = (n: number) => ({ n, text: 'x'.repeat(100 - JSON.stringify({ n, text: '' }).length - 1) });

describe('JsonLinesLog (the per-API request log)', () => {
  const temp = useTempDir();

  it('writes every line, in order, to the file of the day, also those appended while a write is under way', async () => {
    const path = temp.path();
    const log = new JsonLinesLog(join(path, 'logs'));
    const text = 'x'.repeat(200);
    // More than one 64 KiB batch, in bursts separated by turns of the event loop.
    for (let burst = 0; burst < 10; burst++) {
      for (let i = 0; i < 100; i++) log.append({ n: burst * 100 + i, text });
      await new Promise((resolve) => setImmediate(resolve));
    }
    await log.close();
    const lines = readLines(join(path, 'logs'));
    expect(lines.map((l) => l.n)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect(readdirSync(join(path, 'logs'))).toEqual([`${new Date().toISOString().slice(0, 10)}.jsonl`]);
  });

  it('writes a line within a moment without close()', async () => {
    const path = temp.path();
    const log = new JsonLinesLog(join(path, 'logs'));
    log.append({ n: 1, text: 'alone' });
    await waitFor(() => readdirSync(join(path, 'logs')).length > 0 && readLines(join(path, 'logs')).length === 1, {
      what: 'the line in the log file',
      timeoutMs: 2_000,
      everyMs: 10,
    });
    expect(readLines(join(path, 'logs'))).toEqual([{ n: 1, text: 'alone' }]);
    await log.close();
  });

  it('rotates by size: YYYY-MM-DD.jsonl, then .1, .2 …, none above fileBytes, lines in order across them', async () => {
    const dir = join(temp.path(), 'logs');
    const log = new JsonLinesLog(dir, { fileBytes: 1000, totalBytes: 100_000, days: 14 });
    for (let n = 0; n < 25; n++) log.append(line100(n));
    await log.close();
    expect(listed(dir)).toEqual([`${today()}.jsonl`, `${today()}.1.jsonl`, `${today()}.2.jsonl`]);
    expect(listed(dir).map((f) => statSync(join(dir, f)).size)).toEqual([1000, 1000, 500]);
    expect(readLines(dir).map((l) => l.n)).toEqual(Array.from({ length: 25 }, (_, n) => n));
  });

  it("goes on in the day's newest file after a restart, and in a new one when that is full", async () => {
    const dir = join(temp.path(), 'logs');
    const first = new JsonLinesLog(dir, { fileBytes: 1000, totalBytes: 100_000, days: 14 });
    for (let n = 0; n < 15; n++) first.append(line100(n));
    await first.close();
    const second = new JsonLinesLog(dir, { fileBytes: 1000, totalBytes: 100_000, days: 14 });
    for (let n = 15; n < 20; n++) second.append(line100(n));
    await second.close();
    expect(listed(dir).map((f) => statSync(join(dir, f)).size)).toEqual([1000, 1000]);
    const third = new JsonLinesLog(dir, { fileBytes: 1000, totalBytes: 100_000, days: 14 });
    third.append(line100(20));
    await third.close();
    expect(listed(dir)).toEqual([`${today()}.jsonl`, `${today()}.1.jsonl`, `${today()}.2.jsonl`]);
  });

  it('keeps the folder under totalBytes: the oldest files go first, the file being written never', async () => {
    const dir = join(temp.path(), 'logs');
    mkdirSync(dir);
    writeFileSync(join(dir, `${daysAgo(1)}.jsonl`), 'y'.repeat(1000));
    writeFileSync(join(dir, 'notes.txt'), 'not a log file: left alone');
    const removed: Array<[string, number]> = [];
    const log = new JsonLinesLog(
      dir,
      { fileBytes: 1000, totalBytes: 3000, days: 14 },
      { removed: (reason, files) => removed.push([reason, files]) },
    );
    for (let n = 0; n < 45; n++) log.append(line100(n));
    await log.close();
    // Each rotation keeps the older files within 3000 minus the 1000 the new file may take.
    expect(listed(dir)).toEqual([`${today()}.2.jsonl`, `${today()}.3.jsonl`, `${today()}.4.jsonl`, 'notes.txt']);
    expect(readLines(dir).map((l) => l.n)).toEqual(Array.from({ length: 25 }, (_, n) => n + 20));
    expect(removed).toEqual([
      ['size', 1],
      ['size', 1],
      ['size', 1],
    ]);
  });

  it('removes files whose day ended more than `days` days ago when it opens a file', async () => {
    const dir = join(temp.path(), 'logs');
    mkdirSync(dir);
    for (const name of [
      `${daysAgo(400)}.jsonl`,
      `${daysAgo(3)}.jsonl`,
      `${daysAgo(3)}.1.jsonl`,
      `${daysAgo(2)}.jsonl`,
      `${daysAgo(1)}.jsonl`,
    ])
      writeFileSync(join(dir, name), '{}\n');
    const removed: Array<[string, number]> = [];
    const log = new JsonLinesLog(
      dir,
      { fileBytes: 1000, totalBytes: 100_000, days: 2 },
      { removed: (reason, files) => removed.push([reason, files]) },
    );
    log.append(line100(1));
    await log.close();
    expect(listed(dir)).toEqual([`${daysAgo(2)}.jsonl`, `${daysAgo(1)}.jsonl`, `${today()}.jsonl`]);
    expect(removed).toEqual([['age', 3]]);
  });

  it('two writers on one folder (two threads of an API): every line kept, no file far above fileBytes', async () => {
    const dir = join(temp.path(), 'logs');
    const policy = { fileBytes: 2000, totalBytes: 1_000_000, days: 14 };
    const [a, b] = [new JsonLinesLog(dir, policy), new JsonLinesLog(dir, policy)];
    for (let n = 0; n < 200; n++) {
      (n % 3 === 0 ? a : b).append(line100(n));
      // Real time: a pause past the 20 ms flush delay, so both writers flush in turns as threads do.
      if (n % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await Promise.all([a.close(), b.close()]);
    expect(
      readLines(dir)
        .map((l) => l.n)
        .sort((x, y) => x - y),
    ).toEqual(Array.from({ length: 200 }, (_, n) => n));
    // Each writer reads the real size after every eighth of fileBytes it adds; the other's lines
    // not flushed yet (up to 20 ms of them) it cannot see.
    for (const file of listed(dir)) expect(statSync(join(dir, file)).size).toBeLessThanOrEqual(2000 * 1.5);
  });

  it('never throws at its caller: a folder it cannot make loses the lines, with a warning', async () => {
    const blocker = join(temp.path(), 'file');
    writeFileSync(blocker, '');
    const log = new JsonLinesLog(join(blocker, 'logs'));
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on('warning', onWarning);
    try {
      expect(() => log.append({ n: 1 })).not.toThrow();
      await log.close();
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.join('\n')).toMatch(/log write failed in .*logs: ENOTDIR/);
  });
});
