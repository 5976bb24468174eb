/**
 * The files of an API folder as `anvil inspect` shows them: those that enter a release, in the
 * order a reviewer reads them (api.yaml, Maps, Directives, views, migrations, the other assets),
 * each with its text when it is UTF-8 text of a reviewable size.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { releaseFileList } from '../deploy/releases/folder-files.js';

/** A text file larger than this is listed, not shown. */
export const MAX_SHOWN_BYTES = 1024 * 1024;

export interface InspectedFile {
  path: string;
  bytes: number;
  /** The content; null for a binary file or one over MAX_SHOWN_BYTES. */
  text: string | null;
  kind: 'text' | 'binary' | 'too-large';
}

/** Reading order: the lower the rank, the earlier. */
const RANKS: ReadonlyArray<(path: string) => boolean> = [
  (p) => p === 'api.yaml',
  (p) => p.startsWith('Maps/'),
  (p) => p.startsWith('Directives/'),
  (p) => p.startsWith('Assets/views/'),
  (p) => p.startsWith('Assets/db/') || p.startsWith('Assets/sql/'),
];

function rank(path: string): number {
  const found = RANKS.findIndex((matches) => matches(path));
  return found < 0 ? RANKS.length : found;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** UTF-8 without NUL bytes is text; anything else is binary. */
function asText(content: Buffer): string | null {
  if (content.includes(0)) return null;
  try {
    return utf8.decode(content);
  } catch {
    return null;
  }
}

export async function inspectFolder(dir: string): Promise<InspectedFile[]> {
  const paths = (await releaseFileList(dir)).sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  const out: InspectedFile[] = [];
  for (const path of paths) {
    const content = await readFile(join(dir, path));
    if (content.length > MAX_SHOWN_BYTES) {
      out.push({ path, bytes: content.length, text: null, kind: 'too-large' });
      continue;
    }
    const text = asText(content);
    out.push({ path, bytes: content.length, text, kind: text === null ? 'binary' : 'text' });
  }
  return out;
}
