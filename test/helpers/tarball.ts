// Builds tar / tar.gz Buffers in memory for tests, including hostile archives that no well-behaved
// tar tool would write (`..` paths, absolute paths, links, devices, lying pax records...).
// A small hand-written ustar writer: test-only code; production code reads tar with node-tar.

import { gzipSync } from 'node:zlib';

export type TarEntryType = 'file' | 'dir' | 'symlink' | 'hardlink' | 'chardev' | 'blockdev' | 'fifo';

const TYPEFLAG: Record<TarEntryType, string> = {
  file: '0',
  hardlink: '1',
  symlink: '2',
  chardev: '3',
  blockdev: '4',
  dir: '5',
  fifo: '6',
};

export interface TarEntry {
  /** Written verbatim into the header (or a pax record when longer than 100 bytes). */
  path: string;
  /** Default 'file' (or 'dir' when the path ends with '/'). */
  type?: TarEntryType;
  /** Raw typeflag character, overrides `type` (e.g. 'S' sparse, 'V' volume header). */
  typeflag?: string;
  content?: string | Buffer;
  /** A file of this many zero bytes (instead of `content`). */
  zeros?: number;
  linkpath?: string;
  /** Default 0644 for files, 0755 for dirs. */
  mode?: number;
  /** Extra pax records written in an 'x' header before this entry (e.g. `{ path: '../evil' }`). */
  pax?: Record<string, string>;
}

const BLOCK = 512;

function writeString(buf: Buffer, offset: number, length: number, value: string): void {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length > length) throw new Error(`tarball helper: "${value}" does not fit in ${length} bytes`);
  bytes.copy(buf, offset);
}

function writeOctal(buf: Buffer, offset: number, length: number, value: number): void {
  writeString(buf, offset, length, value.toString(8).padStart(length - 1, '0') + '\0');
}

function header(opts: { path: string; typeflag: string; size: number; mode: number; linkpath?: string }): Buffer {
  const h = Buffer.alloc(BLOCK);
  writeString(h, 0, 100, opts.path);
  writeOctal(h, 100, 8, opts.mode);
  writeOctal(h, 108, 8, 1000); // uid
  writeOctal(h, 116, 8, 1000); // gid
  writeOctal(h, 124, 12, opts.size);
  writeOctal(h, 136, 12, Math.floor(Date.UTC(2024, 0, 1) / 1000));
  h.fill(' ', 148, 156); // checksum placeholder
  writeString(h, 156, 1, opts.typeflag);
  if (opts.linkpath !== undefined) writeString(h, 157, 100, opts.linkpath);
  writeString(h, 257, 6, 'ustar\0');
  writeString(h, 263, 2, '00');
  writeString(h, 265, 32, 'tenant');
  writeString(h, 297, 32, 'tenant');
  let sum = 0;
  for (const byte of h) sum += byte;
  writeString(h, 148, 8, sum.toString(8).padStart(6, '0') + '\0 ');
  return h;
}

function padded(data: Buffer): Buffer[] {
  const rest = data.length % BLOCK;
  return rest === 0 ? [data] : [data, Buffer.alloc(BLOCK - rest)];
}

function paxRecords(records: Record<string, string>): Buffer {
  const parts = Object.entries(records).map(([key, value]) => {
    const body = ` ${key}=${value}\n`;
    // the length prefix counts its own digits
    const bodyLen = Buffer.byteLength(body);
    let digits = 1;
    while (String(bodyLen + digits).length !== digits) digits += 1;
    return `${bodyLen + digits}${body}`;
  });
  return Buffer.from(parts.join(''), 'utf8');
}

/** One entry as raw tar blocks (header(s) + padded data). */
export function tarEntry(entry: TarEntry): Buffer {
  const type: TarEntryType = entry.type ?? (entry.path.endsWith('/') ? 'dir' : 'file');
  const typeflag = entry.typeflag ?? TYPEFLAG[type];
  const data =
    entry.zeros !== undefined
      ? Buffer.alloc(entry.zeros)
      : entry.content === undefined
        ? Buffer.alloc(0)
        : Buffer.isBuffer(entry.content)
          ? entry.content
          : Buffer.from(entry.content, 'utf8');
  const blocks: Buffer[] = [];
  const pax: Record<string, string> = { ...(entry.pax ?? {}) };
  let name = entry.path;
  if (Buffer.byteLength(name) > 100 && pax.path === undefined) {
    pax.path = name;
    name = name.slice(0, 90);
  }
  if (Object.keys(pax).length > 0) {
    const records = paxRecords(pax);
    blocks.push(header({ path: `PaxHeader/${name.slice(0, 80)}`, typeflag: 'x', size: records.length, mode: 0o644 }));
    blocks.push(...padded(records));
  }
  const mode = entry.mode ?? (type === 'dir' ? 0o755 : 0o644);
  const hasBody = typeflag === '0' || typeflag === '7' || typeflag === 'S';
  blocks.push(
    header({
      path: name,
      typeflag,
      size: hasBody ? data.length : 0,
      mode,
      ...(entry.linkpath !== undefined ? { linkpath: entry.linkpath } : {}),
    }),
  );
  if (hasBody) blocks.push(...padded(data));
  return Buffer.concat(blocks);
}

/** A complete uncompressed tar: entries, then the two zero blocks of the end marker. */
export function tar(entries: TarEntry[]): Buffer {
  return Buffer.concat([...entries.map(tarEntry), Buffer.alloc(2 * BLOCK)]);
}

export type TarInput = Record<string, string | Buffer> | TarEntry[];

function toEntries(input: TarInput): TarEntry[] {
  if (Array.isArray(input)) return input;
  return Object.entries(input).map(([p, content]) =>
    p.endsWith('/') ? { path: p, type: 'dir' as const } : { path: p, content },
  );
}

/**
 * A .tar.gz Buffer. Either a map `{ 'api.yaml': '...', 'Maps/': '' , 'Maps/main.json': '...' }`
 * (keys ending in '/' are directories) or a list of (possibly hostile) entries.
 */
export function tarGz(input: TarInput): Buffer {
  return gzipSync(tar(toEntries(input)));
}

export function gzip(data: Buffer | string): Buffer {
  return gzipSync(typeof data === 'string' ? Buffer.from(data) : data);
}

export const API_YAML = 'name: demo\nroutes:\n  - path: /ping\n    flow: [Ping]\n';
