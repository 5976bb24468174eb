import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { readLogFiles } from '../log-files.js';
import type { LogFilter } from './log-filter.js';

const CHUNK = 256 * 1024;
/** How far back a search for matching lines reads at most (the newest files first). */
const SCAN_BYTES = 32 * 1024 * 1024;

/**
 * The last `limit` lines of an API's request log that pass `filter`, oldest first: its files are
 * read from the end backwards, newest file first, until enough lines matched or 32 MiB were read.
 */
export async function recentLines(dir: string, filter: LogFilter, limit: number): Promise<string[]> {
  const found: string[] = [];
  let budget = SCAN_BYTES;
  const files = (await readLogFiles(dir)).reverse();
  for (const file of files) {
    if (found.length >= limit || budget <= 0) break;
    budget -= await scanBackwards(join(dir, file.name), filter, limit, found, budget);
  }
  return found.slice(0, limit).reverse();
}

/** Adds matching lines to `found` newest first; returns the bytes read. */
async function scanBackwards(
  path: string,
  filter: LogFilter,
  limit: number,
  found: string[],
  budget: number,
): Promise<number> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch {
    return 0; // removed by retention meanwhile
  }
  let read = 0;
  try {
    let end = (await handle.stat()).size;
    // Bytes of a line cut by the chunk before (the start of it is in the next chunk back).
    let carry = Buffer.alloc(0);
    while (end > 0 && found.length < limit && read < budget) {
      const start = Math.max(0, end - CHUNK);
      const chunk = Buffer.allocUnsafe(end - start);
      await handle.read(chunk, 0, chunk.length, start);
      read += chunk.length;
      const text = Buffer.concat([chunk, carry]);
      let cut = text.length;
      for (let nl = text.lastIndexOf(10, cut - 1); nl >= 0 || start === 0; nl = text.lastIndexOf(10, cut - 1)) {
        const line = text.subarray(nl + 1, cut).toString('utf8');
        cut = Math.max(nl, 0);
        if (line !== '' && filter.matches(line)) {
          found.push(line);
          if (found.length >= limit) break;
        }
        if (nl < 0) break;
      }
      carry = text.subarray(0, cut);
      end = start;
    }
  } finally {
    await handle.close();
  }
  return read;
}
