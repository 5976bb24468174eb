// The path of a tar entry, checked before anything touches the disk.

const MAX_PATH_BYTES = 1024;
const MAX_SEGMENT_BYTES = 255;

/**
 * Checks a tar entry path. Returns the normalised segments (no '', '.' or '..') or a reason.
 * `./a/b/` is fine (-> ['a', 'b']); anything that could name something outside the folder, or
 * be read differently on another OS, is refused.
 */
export function checkEntryPath(p: string): { segments: string[] } | { reason: string } {
  if (p.length === 0) return { reason: 'path is empty' };
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for.
  if (/[\u0000-\u001f\u007f]/.test(p)) return { reason: 'control characters are not allowed in paths' };
  if (p.startsWith('/')) return { reason: 'absolute paths are not allowed' };
  if (p.includes('\\')) return { reason: 'backslashes are not allowed in paths' };
  // `C:foo`, `C:\x`, NTFS streams `file:stream`: ':' has no business in an API folder.
  if (p.includes(':')) return { reason: 'drive letters and ":" are not allowed in paths' };
  if (Buffer.byteLength(p) > MAX_PATH_BYTES) return { reason: `path is longer than ${MAX_PATH_BYTES} bytes` };
  const segments: string[] = [];
  let escapes = false;
  let dotdot = false;
  let depth = 0;
  for (const s of p.split('/')) {
    if (s === '' || s === '.') continue;
    if (s === '..') {
      dotdot = true;
      depth -= 1;
      if (depth < 0) escapes = true;
      continue;
    }
    if (Buffer.byteLength(s) > MAX_SEGMENT_BYTES) {
      return { reason: `a path segment is longer than ${MAX_SEGMENT_BYTES} bytes` };
    }
    depth += 1;
    segments.push(s);
  }
  if (escapes) return { reason: 'path leaves the API folder' };
  if (dotdot) return { reason: '".." is not allowed in paths' };
  return { segments };
}

/** macOS / pax metadata that some tools leave in archives: skipped, never written. */
export function isMetadata(segments: string[]): boolean {
  const base = segments[segments.length - 1] ?? '';
  if (base.startsWith('._') || base === '.DS_Store') return true;
  return segments.some((s) => s === '__MACOSX' || s === 'PaxHeader' || /^PaxHeaders\.\d+$/.test(s));
}
