// Reads the body of `POST /anvil/api` (SPEC §6): the API folder as a .tar.gz, sent either raw or as
// the multipart/form-data field `file`, and unpacks it with unpackTarGz.
//
// What happens to a body we do not read to the end (413 on content-length, 415, an unpack that
// stopped early, an oversize multipart body):
//   Destroying the request would close the socket while the client is still sending, and clients
//   then usually report ECONNRESET instead of our 413/415. So instead we DRAIN: the rest of the
//   body is read and thrown away (`discardBody`), which lets the caller's response reach the
//   client on a healthy connection. Draining is bounded: once more than
//   max(2 × maxUploadBytes, 1 MiB) bytes have been discarded the request is destroyed (the client
//   is ignoring our answer), so a body up to about twice the limit still gets a clean 413.
//   The caller may write its response immediately; it does not have to wait for the drain.
//   Callers may also send `connection: close` with such answers.

import type { IncomingMessage } from 'node:http';
import { rm } from 'node:fs/promises';
import busboy from 'busboy';
import { discardBody } from '../http/body.js';
import { defaultUnpackLimits, unpackTarGz, type UnpackLimits, type UnpackResult } from './unpack.js';

/** Content types accepted for a raw .tar.gz body (a missing content-type is accepted too). */
export const RAW_ARCHIVE_TYPES: ReadonlySet<string> = new Set([
  'application/gzip',
  'application/x-gzip',
  'application/x-tar+gzip',
  'application/octet-stream',
]);

/**
 * Boundaries, part headers and small extra fields around the archive in a multipart body: the
 * whole multipart body may be this much larger than maxUploadBytes (the archive itself is still
 * held to maxUploadBytes exactly).
 */
export const MULTIPART_OVERHEAD_BYTES = 1024 * 1024;

export const NO_FILE_FIELD_ERROR = 'multipart upload has no "file" field';

type Failure = Extract<UnpackResult, { ok: false }>;
const refusal = (status: Failure['status'], message: string): Failure => ({ ok: false, status, errors: [message] });
const tooLarge = (limits: UnpackLimits): Failure => refusal(413, `the upload is larger than ${limits.maxUploadBytes} bytes`);
const noop = (): void => {};

export async function unpackUpload(
  req: IncomingMessage,
  destDir: string,
  limits: UnpackLimits = defaultUnpackLimits,
): Promise<UnpackResult> {
  req.on('error', noop); // a client that goes away mid-upload must not crash the process
  const type = mediaType(req.headers['content-type']);
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
    return tooLarge(limits);
  }

  // The byte counts below are taken on the stream itself: content-length may be absent
  // (chunked encoding) and is never trusted beyond the early refusal above.
  try {
    return multipart ? await readMultipart(req, destDir, limits, allowance) : await unpackTarGz(req, destDir, limits);
  } finally {
    discardBody(req, drainBudget(limits)); // no-op when the body was read to the end
  }
}

/** `Multipart/Form-Data; boundary=x` -> `multipart/form-data`; missing -> ''. */
function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

function contentLength(req: IncomingMessage): number | undefined {
  const raw = req.headers['content-length'];
  if (raw === undefined || !/^\s*\d+\s*$/.test(raw)) return undefined;
  return Number(raw);
}

const drainBudget = (limits: UnpackLimits): number => Math.max(2 * limits.maxUploadBytes, 1024 * 1024);

/** Reads and throws away what is left of the body, at most `budget` bytes; then destroys it. */
function readMultipart(
  req: IncomingMessage,
  destDir: string,
  limits: UnpackLimits,
  allowance: number,
): Promise<UnpackResult> {
  return new Promise<UnpackResult>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        limits: { fields: 50, fieldSize: 64 * 1024, parts: 100, headerPairs: 50 },
      });
    } catch (err) {
      resolve(refusal(400, `the multipart upload is malformed: ${(err as Error).message}`));
      return;
    }

    let unpacking: Promise<UnpackResult> | undefined;
    let concluded = false;
    let received = 0;

    /**
     * Ends the multipart reading (normally or not). Never resolves while unpackTarGz is still
     * running, so destDir is in its final state (unpacked, or cleaned up) when we return.
     */
    const conclude = (override?: Failure): void => {
      if (concluded) return;
      concluded = true;
      req.unpipe(parser);
      req.removeListener('data', count);
      req.removeListener('close', onClose);
      parser.on('error', noop);
      // Stops the archive stream if it is still open: unpackTarGz then sees an interrupted upload,
      // fails and cleans up (a no-op when busboy has already finished).
      parser.destroy();
      const pending = unpacking ?? Promise.resolve(undefined);
      pending.then(async (unpacked) => {
        const result: UnpackResult = override ?? unpacked ?? refusal(400, NO_FILE_FIELD_ERROR);
        if (unpacked?.ok && result !== unpacked) await rm(destDir, { recursive: true, force: true });
        return result;
      }).then(resolve, reject);
    };

    const count = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > allowance) conclude(tooLarge(limits));
    };
    const onClose = (): void => {
      if (!req.complete) conclude(refusal(400, 'the upload was interrupted before it was complete'));
    };

    parser.on('file', (name, stream) => {
      stream.on('error', noop);
      if (name !== 'file' || unpacking || concluded) {
        stream.resume(); // other file fields are ignored (their bytes still count)
        return;
      }
      unpacking = unpackTarGz(stream, destDir, limits);
      // A failed unpack stopped reading early: no need to read the rest of the form. (A thrown
      // file-system error also ends here; conclude() passes it on as a rejection.)
      unpacking.then((result) => (result.ok ? undefined : conclude()), () => conclude());
    });
    parser.on('field', noop); // other fields are ignored
    parser.on('close', () => conclude());
    parser.on('error', (err: unknown) => {
      conclude(refusal(400, `the multipart upload is malformed: ${err instanceof Error ? err.message : String(err)}`));
    });

    req.on('data', count);
    req.on('close', onClose);
    req.pipe(parser);
  });
}
