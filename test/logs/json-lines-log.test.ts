import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JsonLinesLog } from '../../src/logs/json-lines-log.js';
import { useTempDir } from '../helpers/temp-dir.js';

function readLines(dir: string): Array<{ n: number; text: string }> {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean))
    .map((line) => JSON.parse(line) as { n: number; text: string });
}

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
    const deadline = Date.now() + 2_000;
    while (Date.now() < deadline) {
      const lines = readdirSync(join(path, 'logs')).length > 0 ? readLines(join(path, 'logs')) : [];
      if (lines.length === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(readLines(join(path, 'logs'))).toEqual([{ n: 1, text: 'alone' }]);
    await log.close();
  });
});
