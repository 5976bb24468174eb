import { join } from 'node:path';
import type { ApiRuntime } from '../../engine/context.js';

/**
 * The folder of the API's data dir that `ServeStatic` with `storage: true` serves from. Only this
 * sub-folder, never the data dir itself: that also holds the API's database and logs.
 */
export const STORAGE_FOLDER = 'storage';

/** Largest file ServeStatic sends. */
export const STATIC_MAX_BYTES = 10 * 1024 * 1024;

/** A larger file is streamed from disk by the router rather than read by the thread and sent whole. */
export const STATIC_STREAM_ABOVE_BYTES = 64 * 1024;

/** The root a ServeStatic file must stay in: the release's `Assets/` or `<data dir>/storage/`. */
export function staticRoot(api: ApiRuntime, storage: boolean): string {
  return storage ? join(api.dataDir, STORAGE_FOLDER) : join(api.releaseDir, 'Assets');
}
