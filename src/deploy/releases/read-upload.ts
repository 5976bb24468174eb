// Unpacks a received upload (receive-upload.ts wrote the body to a file): the API folder as a
// .tar.gz, sent either raw or as the multipart/form-data field `file`. Runs in the deploy worker.
// `unpackUpload` does both steps in one process, straight from a request.

import type { IncomingMessage } from 'node:http';
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import busboy from 'busboy';
import { receiveUpload, type ReceivedUpload } from './receive-upload.js';
import { unpackTarGz, type UnpackResult } from './unpack.js';
import { defaultUnpackLimits, type Refusal, type UnpackLimits } from './upload-limits.js';

export const NO_FILE_FIELD_ERROR = 'multipart upload has no "file" field';

const refusal = (status: Refusal['status'], message: string): Refusal => ({ ok: false, status, errors: [message] });
const noop = (): void => {};

/** Unpacks the archive of a received upload into `destDir`. */
export function unpackReceived(
  upload: Pick<ReceivedUpload, 'file' | 'contentType' | 'multipart'>,
  destDir: string,
  limits: UnpackLimits,
): Promise<UnpackResult> {
  if (!upload.multipart) return unpackTarGz(createReadStream(upload.file), destDir, limits);
  return readMultipart(upload.file, upload.contentType, destDir, limits);
}

/** Receives the body of `req` into a file beside `destDir` and unpacks it there; the file is removed. */
export async function unpackUpload(
  req: IncomingMessage,
  destDir: string,
  limits: UnpackLimits = defaultUnpackLimits,
): Promise<UnpackResult> {
  const file = `${destDir}.upload`;
  try {
    const received = await receiveUpload(req, file, limits);
    if (!received.ok) return received;
    return await unpackReceived(received, destDir, limits);
  } finally {
    await rm(file, { force: true });
  }
}

function readMultipart(
  file: string,
  contentType: string,
  destDir: string,
  limits: UnpackLimits,
): Promise<UnpackResult> {
  return new Promise<UnpackResult>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        limits: { fields: 50, fieldSize: 64 * 1024, parts: 100, headerPairs: 50 },
      });
    } catch (err) {
      resolve(refusal(400, `the multipart upload is malformed: ${(err as Error).message}`));
      return;
    }
    const body = createReadStream(file);
    let unpacking: Promise<UnpackResult> | undefined;
    let concluded = false;

    /**
     * Ends the multipart reading (normally or not). Never resolves while unpackTarGz is still
     * running, so destDir is in its final state (unpacked, or cleaned up) when we return.
     */
    const conclude = (override?: Refusal): void => {
      if (concluded) return;
      concluded = true;
      body.unpipe(parser);
      body.destroy();
      parser.on('error', noop);
      // Stops the archive stream if it is still open: unpackTarGz then sees an interrupted upload,
      // fails and cleans up (a no-op when busboy has already finished).
      parser.destroy();
      const pending = unpacking ?? Promise.resolve(undefined);
      pending
        .then(async (unpacked) => {
          const result: UnpackResult = override ?? unpacked ?? refusal(400, NO_FILE_FIELD_ERROR);
          if (unpacked?.ok && result !== unpacked) await rm(destDir, { recursive: true, force: true });
          return result;
        })
        .then(resolve, reject);
    };

    parser.on('file', (name, stream) => {
      stream.on('error', noop);
      if (name !== 'file' || unpacking || concluded) {
        stream.resume(); // other file fields are ignored
        return;
      }
      unpacking = unpackTarGz(stream, destDir, limits);
      // A failed unpack stopped reading early: no need to read the rest of the form. (A thrown
      // file-system error also ends here; conclude() passes it on as a rejection.)
      unpacking.then(
        (result) => (result.ok ? undefined : conclude()),
        () => conclude(),
      );
    });
    parser.on('field', noop); // other fields are ignored
    parser.on('close', () => conclude());
    parser.on('error', (err: unknown) => {
      conclude(refusal(400, `the multipart upload is malformed: ${err instanceof Error ? err.message : String(err)}`));
    });
    body.on('error', (err) => reject(err));
    body.pipe(parser);
  });
}
