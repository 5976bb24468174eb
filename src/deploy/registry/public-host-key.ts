import { randomBytes } from 'node:crypto';

/** A new `public-host-key`: 32 random bytes, base64url (43 characters, no padding). */
export function generatePublicHostKey(): string {
  return randomBytes(32).toString('base64url');
}
