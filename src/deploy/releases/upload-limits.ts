/** Limits of an uploaded archive, shared by the router (which receives it) and the deploy worker (which unpacks it). */
export interface UnpackLimits {
  /** Compressed bytes of the upload. */
  maxUploadBytes: number;
  /** Sum of the sizes of all unpacked files (decompression bombs). */
  maxUnpackedBytes: number;
  /** Number of tar entries (files, directories, ignored metadata, refused entries). */
  maxEntries: number;
}

const MiB = 1024 * 1024;

export const defaultUnpackLimits: UnpackLimits = Object.freeze({
  maxUploadBytes: 50 * MiB,
  maxUnpackedBytes: 50 * MiB,
  maxEntries: 5000,
});

/**
 * Boundaries, part headers and small extra fields around the archive in a multipart body: the
 * whole multipart body may be this much larger than maxUploadBytes (the archive itself is still
 * held to maxUploadBytes exactly).
 */
export const MULTIPART_OVERHEAD_BYTES = 1024 * 1024;

/** A refused upload or deploy: the status and every reason. */
export interface Refusal {
  ok: false;
  status: 400 | 413 | 415;
  errors: string[];
}
