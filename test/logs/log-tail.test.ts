import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseLogFilter, type LogFilter } from '../../src/shared/logs/follow/log-filter.js';
import { LogTail } from '../../src/shared/logs/follow/log-tail.js';
import { recentLines } from '../../src/shared/logs/follow/recent-lines.js';
import { JsonLinesLog } from '../../src/shared/logs/json-lines-log.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { waitFor } from '../helpers/wait-for.js';

// The request log as the admin host's /logs reads it: followed live across rotations (LogTail), and
// read backwards for the last lines (recentLines).

const tmp = useTempDir('anvil-log-tail-');
const day = () => new Date().toISOString().slice(0, 10);
const all = parseLogFilter(new URLSearchParams()) as LogFilter;

describe('LogTail', () => {
  it('follows from the end: only lines appended after it started, across rotated files, each whole', async () => {
    const dir = tmp.path();
    const log = new JsonLinesLog(dir, { fileBytes: 2_000, totalBytes: 1_000_000, days: 14 });
    log.append({ n: 'before' });
    await log.close();
    const seen: string[] = [];
    const tail = new LogTail(dir, (line) => seen.push(line));
    await tail.start();
    try {
      const writer = new JsonLinesLog(dir, { fileBytes: 2_000, totalBytes: 1_000_000, days: 14 });
      // About 200 bytes a line: several files of 2,000 bytes.
      for (let n = 0; n < 40; n++) writer.append({ n, pad: 'é'.repeat(90) });
      await writer.close();
      await waitFor(() => seen.length >= 40, { what: '40 lines followed' });
      expect(seen.map((l) => JSON.parse(l).n)).toEqual(Array.from({ length: 40 }, (_, n) => n));
    } finally {
      tail.stop();
    }
  });

  it('waits for the rest of a line written in two parts', async () => {
    const dir = tmp.path();
    const file = join(dir, `${day()}.jsonl`);
    writeFileSync(file, '');
    const seen: string[] = [];
    const tail = new LogTail(dir, (line) => seen.push(line));
    await tail.start();
    try {
      appendFileSync(file, '{"half":');
      await new Promise((r) => setTimeout(r, 500));
      expect(seen).toEqual([]);
      appendFileSync(file, '"done"}\n');
      await waitFor(() => seen.length === 1, { what: 'the completed line' });
      expect(seen).toEqual(['{"half":"done"}']);
    } finally {
      tail.stop();
    }
  });
});

describe('recentLines', () => {
  it('reads the newest files backwards, oldest first in the answer, across chunk boundaries', async () => {
    const dir = tmp.path();
    const log = new JsonLinesLog(dir, { fileBytes: 300_000, totalBytes: 10_000_000, days: 14 });
    // ~1 KiB lines: several 256 KiB chunks and several files.
    for (let n = 0; n < 2_000; n++) log.append({ n, status: n % 10 === 0 ? 500 : 200, pad: 'ü'.repeat(500) });
    await log.close();
    expect((await recentLines(dir, all, 3)).map((l) => JSON.parse(l).n)).toEqual([1997, 1998, 1999]);
    const failures = (await recentLines(dir, parseLogFilter(new URLSearchParams('status=5xx')) as LogFilter, 150)).map(
      (l) => JSON.parse(l).n,
    );
    expect(failures).toEqual(Array.from({ length: 150 }, (_, i) => 500 + i * 10));
    expect(await recentLines(join(dir, 'none'), all, 5)).toEqual([]);
  });
});
