/**
 * Bounds on rendering untrusted Liquid templates (View, SetSmartError). One View request shares one
 * budget between its fragments and its page: the render time and the liquidjs allocation counter
 * are not reset per template.
 */
export interface ViewLimits {
  /** Largest template file, in bytes (also liquidjs `parseLimit`, in characters, per parse). */
  readonly templateBytes: number;
  /** Wall time for all the templates of one request (liquidjs `renderLimit`), ms. */
  readonly renderMs: number;
  /**
   * liquidjs `memoryLimit`: what its filters and ranges may allocate in one request, counted in
   * array elements and string characters (not bytes): `(1..N)` costs N, `| join` its output length.
   */
  readonly memoryUnits: number;
  /** Largest rendered page (the response body), in bytes. */
  readonly outputBytes: number;
  /**
   * Characters all emitters of one request may produce together: the page, the fragments, every
   * `capture` and `block.super` (each counts again when it is output), so text built and thrown
   * away cannot grow without bound while the clock runs.
   */
  readonly emittedChars: number;
  /** How deep blocks, loops and includes may nest while rendering (each include adds one level or two). */
  readonly nestingDepth: number;
  /** Parsed templates kept per thread (LRU). */
  readonly parsedTemplates: number;
  /** Template files kept in memory per thread, and their total size. */
  readonly cachedFiles: number;
  readonly cachedFileBytes: number;
}

const MiB = 1024 * 1024;

export const VIEW_LIMITS: ViewLimits = Object.freeze({
  templateBytes: 1 * MiB,
  renderMs: 1000,
  memoryUnits: 8_000_000,
  outputBytes: 5 * MiB,
  emittedChars: 20 * MiB,
  nestingDepth: 200,
  parsedTemplates: 1024,
  cachedFiles: 2048,
  cachedFileBytes: 32 * MiB,
});

/** `5 MiB`, `1000 ms`: how limits are named in error messages. */
export function formatBytes(bytes: number): string {
  if (bytes % MiB === 0) return `${bytes / MiB} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
