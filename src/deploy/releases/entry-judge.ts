// Decides what becomes of each tar entry before anything touches the disk: its path and type are
// checked, and it is compared with the entries before it.

import type { ReadEntry } from 'tar';
import { checkEntryPath, isMetadata } from './entry-path.js';

export type EntryVerdict = { kind: 'file' | 'dir'; segments: string[] } | { skip: true } | { reason: string };

export class EntryJudge {
  /** What each path seen so far is, its parent directories included. */
  private readonly kinds = new Map<string, 'file' | 'dir'>();

  judge(entry: ReadEntry): EntryVerdict {
    const checked = checkEntryPath(entry.path);
    if ('reason' in checked) return checked;
    let kind: 'file' | 'dir';
    switch (entry.type) {
      case 'File':
      case 'OldFile':
      case 'ContiguousFile':
        kind = 'file';
        break;
      case 'Directory':
        kind = 'dir';
        break;
      case 'SymbolicLink':
      case 'Link':
        return { reason: 'links are not allowed' };
      case 'CharacterDevice':
      case 'BlockDevice':
      case 'FIFO':
        return { reason: 'devices and fifos are not allowed' };
      default:
        return { reason: `entries of type "${entry.type}" are not allowed` };
    }
    const { segments } = checked;
    if (segments.length === 0) return kind === 'dir' ? { skip: true } : { reason: 'path is empty' };
    if (isMetadata(segments)) return { skip: true };

    // Conflicts with earlier entries: a file twice, a file where a directory was (or below a
    // file). Detected here so the file system never has to arbitrate.
    for (let i = 1; i < segments.length; i++) {
      if (this.kinds.get(segments.slice(0, i).join('/')) === 'file') {
        return { reason: 'conflicts with an earlier file entry' };
      }
    }
    const key = segments.join('/');
    const before = this.kinds.get(key);
    if (before === 'file') return { reason: 'appears more than once in the archive' };
    if (before === 'dir' && kind === 'file') return { reason: 'conflicts with an earlier directory entry' };
    for (let i = 1; i < segments.length; i++) this.kinds.set(segments.slice(0, i).join('/'), 'dir');
    this.kinds.set(key, kind);
    return { kind, segments };
  }
}
