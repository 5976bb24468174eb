// Receives the body of `POST /anvil/api` (SPEC §6) on the router: checks its headers, then writes
// its bytes to a file for the deploy worker, which unpacks it (read-upload.ts). Nothing of the body
// is parsed here: the router only counts and moves bytes.
//
// What happens to a body we do not read to the end (415, 413 on content-length or once the bytes
// pass the limit):
//   Destroying the request would close the socket while the client is still sending, and clients
//   then usually report ECONNRESET instead of our 413/415. So instead we DRAIN: the rest of the
//   body is read and thrown away (`discardBody`), which lets the caller's response reach the
//   client on a healthy connection. Draining is bounded: once more than
//   max(2 × maxUploadBytes, 1 MiB) bytes have been discarded the request is destroyed (the client
//   is ignoring our answer), so a body up to about twice the limit still gets a clean 413.
//   The caller may write its response immediately; it does not have to wait for the drain.

import { createWriteStream } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { discardBody } from '../../shared/http/body.js';
import { MULTIPART_OVERHEAD_BYTES, type Refusal, type UnpackLimits } from './upload-limits.js';

/** Content types accepted for a raw .tar.gz body (a missing content-type is accepted too). */
export const RAW_ARCHIVE_TYPES: ReadonlySet<string> = new Set([
  'application/gzip',
  'application/x-gzip',
  'application/x-tar+gzip',
  'application/octet-stream',
]);

/** A body written whole to `file`; `contentType` (with its boundary) tells how to read it. */
export interface ReceivedUpload {
  ok: true;
  file: string;
  contentType: string;
  multipart: boolean;
}

const refusal = (status: Refusal['status'], message: string): Refusal => ({ ok: false, status, errors: [message] });
export const uploadTooLarge = (limits: UnpackLimits): Refusal =>
  refusal(413, `the upload is larger than ${limits.maxUploadBytes} bytes`);
const noop = (): void => {};

/** Writes the request body to `file` (which must not exist), or refuses it. */
export async function receiveUpload(
  req: IncomingMessage,
  file: string,
  limits: UnpackLimits,
): Promise<ReceivedUpload | Refusal> {
  req.on('error', noop); // a client that goes away mid-upload must not crash the process
  const contentType = req.headers['content-type'] ?? '';
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity' && encoding !== '') {
    discardBody(req, drainBudget(limits));
    return refusal(415, `content-encoding "${encoding}" is not supported: send the .tar.gz as it is`);
  }
  const multipart = type === 'multipart/form-data';
  if (!multipart && type !== '' && !RAW_ARCHIVE_TYPES.has(type)) {
    discardBody(req, drainBudget(limits));
    return refusal(
      415,
      `content type "${type}" is not supported: send the .tar.gz raw (content-type: application/gzip) or as the multipart/form-data field "file"`,
    );
  }
  const allowance = multipart ? limits.maxUploadBytes + MULTIPART_OVERHEAD_BYTES : limits.maxUploadBytes;
  const declared = contentLength(req);
  if (declared !== undefined && declared > allowance) {
    // Refused without reading a byte of the body (see the note at the top on draining).
    discardBody(req, drainBudget(limits));
    return uploadTooLarge(limits);
  }

  // Counted on the stream itself: content-length may be absent (chunked encoding) and is never
  // trusted beyond the early refusal above.
  const outcome = await spool(req, file, allowance);
  if (outcome === 'too-large') {
    discardBody(req, drainBudget(limits));
    return uploadTooLarge(limits);
  }
  if (outcome === 'interrupted') return refusal(400, 'the upload was interrupted before it was complete');
  return { ok: true, file, contentType, multipart };
}

function contentLength(req: IncomingMessage): number | undefined {
  const raw = req.headers['content-length'];
  if (raw === undefined || !/^\s*\d+\s*$/.test(raw)) return undefined;
  return Number(raw);
}

const drainBudget = (limits: UnpackLimits): number => Math.max(2 * limits.maxUploadBytes, 1024 * 1024);

/** Pipes the body into `file` until it ends, passes `allowance` bytes or the client goes away. */
function spool(
  req: IncomingMessage,
  file: string,
  allowance: number,
): Promise<'complete' | 'too-large' | 'interrupted'> {
  if (req.destroyed) return Promise.resolve('interrupted');
  return new Promise((resolve, reject) => {
    const out = createWriteStream(file, { flags: 'wx', mode: 0o600 });
    let received = 0;
    let settled = false;
    // The disk, not the client (ENOSPC, EACCES…): also when it comes while the last bytes are flushed.
    let failure: Error | null = null;
    const finish = (outcome: 'complete' | 'too-large' | 'interrupted'): void => {
      if (settled) return;
      settled = true;
      detach();
      if (outcome === 'complete') out.end();
      else out.destroy();
      out.once('close', () => (outcome === 'complete' && failure !== null ? reject(failure) : resolve(outcome)));
    };
    const count = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > allowance) finish('too-large');
    };
    const onEnd = (): void => finish('complete');
    const onClose = (): void => {
      if (!req.complete) finish('interrupted');
    };
    const detach = (): void => {
      req.unpipe(out);
      req.removeListener('data', count);
      req.removeListener('end', onEnd);
      req.removeListener('close', onClose);
    };
    out.on('error', (error) => {
      failure ??= error;
      if (settled) return;
      settled = true;
      detach();
      reject(error);
    });
    req.on('data', count);
    req.on('end', onEnd);
    req.on('close', onClose);
    req.pipe(out, { end: false });
  });
}
