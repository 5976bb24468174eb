// Safe unpacking of an uploaded API folder (.tar.gz). See SPEC §6 `POST /anvil/api`.
//
// Tenants are attackers, so the archive is treated as hostile input:
//  - node-tar's `Parser` reads the tar format; we decompress with node:zlib ourselves so that a
//    non-gzip upload is refused and every decompressed byte is counted (upload-feed.ts,
//    tar-reader.ts).
//  - Nothing is written by node-tar. Every entry is checked (path, type, conflicts with earlier
//    entries) BEFORE anything touches the disk (entry-path.ts, entry-judge.ts), and we do the
//    writes ourselves, never creating links (entry-writer.ts).
//  - Refusals are visible: one error per offending entry; the whole unpack fails and `destDir` is
//    cleaned up (unpack-failure.ts, unpack-destination.ts).
//  - Limits (compressed bytes, unpacked file bytes, entries, and the expanded tar stream) stop
//    the unpack at once with 413.

import path from 'node:path';
import { cleanDestination, prepareDestination } from './unpack-destination.js';
import { UnpackJob } from './unpack-job.js';
import type { UnpackResult } from './unpack-result.js';
import { defaultUnpackLimits, type UnpackLimits } from './upload-limits.js';

export { checkEntryPath } from './entry-path.js';
export { NO_API_YAML_ERROR, type UnpackResult } from './unpack-result.js';
export { defaultUnpackLimits, type UnpackLimits } from './upload-limits.js';

/**
 * Unpacks a .tar.gz into `destDir` (created if missing; it must be empty).
 *
 * `source` is never destroyed: when the unpack stops early (limit, corrupt data) we remove our
 * listeners and pause it, leaving a no-op 'error' listener; the caller owns the rest of it (an HTTP
 * request body should then be drained or the connection closed; see read-upload.ts).
 *
 * On failure (`ok: false`) `destDir` is removed if we created it, emptied otherwise. Unexpected
 * file-system errors (ENOSPC, EACCES...) are thrown after the same clean-up.
 */
export async function unpackTarGz(
  source: NodeJS.ReadableStream | Buffer,
  destDir: string,
  limits: UnpackLimits = defaultUnpackLimits,
): Promise<UnpackResult> {
  const dest = path.resolve(destDir);
  // Listen for 'error' / 'close' on the source before the first await, so that nothing it emits
  // while we prepare the destination is lost (or crashes the process).
  const job = new UnpackJob(dest, limits, source);
  let created: boolean;
  try {
    created = await prepareDestination(dest);
  } catch (err) {
    job.dispose();
    throw err;
  }
  let result: UnpackResult;
  try {
    result = await job.run();
  } catch (err) {
    await cleanDestination(dest, created);
    throw err;
  }
  if (!result.ok) await cleanDestination(dest, created);
  return result;
}
