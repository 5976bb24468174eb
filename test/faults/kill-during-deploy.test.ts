import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startInstance, TEST_KEY, type TestInstance } from '../helpers/instance.js';
import { tarGz } from '../helpers/tarball.js';
import { waitFor } from '../helpers/wait-for.js';

// SIGKILL of the whole instance in the middle of a deploy: after a restart on the same data
// directory, the API serves a whole release (the old one, or the new one if it was recorded),
// the registry and the release folders agree, and nothing of the cut deploy is left on disk.

const api = (variant: string) => `key: shop
endpoints:
  get /variant:
    Reply: { directive: ModifyMessage, body: { variant: ${variant} } }
`;

/** A deploy archive of a few MiB (random bytes do not compress), so there is time to cut it. */
function bigRelease(variant: string): Buffer {
  const files: Record<string, string | Buffer> = { 'api.yaml': api(variant) };
  for (let i = 0; i < 24; i++) files[`Assets/blob-${i}.bin`] = randomBytes(256 * 1024);
  return tarGz(files);
}

/** Starts POST /anvil/api and sends `fraction` of the body; the request stays open. */
function startUpload(anvil: TestInstance, archive: Buffer, fraction: number): Promise<void> {
  const req = request({
    host: '127.0.0.1',
    port: anvil.port,
    method: 'POST',
    path: '/anvil/api',
    headers: {
      host: 'admin.localhost',
      'public-host': 'localhost',
      'public-host-key': TEST_KEY,
      'content-type': 'application/gzip',
      'content-length': archive.length,
    },
  });
  req.on('error', () => {});
  const cut = Math.floor(archive.length * fraction);
  return new Promise((resolve) =>
    req.write(archive.subarray(0, cut), () => (fraction >= 1 ? req.end(resolve) : resolve())),
  );
}

function leftovers(dataDir: string): { tmp: string[]; releases: string[] } {
  const tmp = readdirSync(join(dataDir, '.anvil', 'tmp'));
  const releases = readdirSync(join(dataDir, '.anvil', 'releases', 'localhost', 'shop'));
  return { tmp, releases };
}

describe('SIGKILL during a deploy', () => {
  let anvil: TestInstance | undefined;
  afterEach(async () => {
    await anvil?.dispose();
  });

  for (const [moment, fraction] of [
    ['half-way through the upload', 0.5],
    ['just after the upload ended, while the release is unpacked and staged', 1],
  ] as const) {
    it(`${moment}: a restart serves a whole release and keeps nothing of the cut deploy`, async () => {
      const first = await startInstance({ apis: { shop: { 'api.yaml': api('old') } } });
      const before = (await first.admin('/anvil/api/shop')).json();
      await startUpload(first, bigRelease('new'), fraction);
      await waitFor(() => readdirSync(join(first.dataDir, '.anvil', 'tmp')).length > 0, {
        what: 'the deploy to be under way',
      });
      first.signal('SIGKILL');
      await first.waitForExit();

      anvil = await startInstance({ dataDir: first.dataDir, apis: { shop: { 'api.yaml': api('old') } } });
      const variant = (await anvil.request('/shop/variant')).json().variant;
      const record = (await anvil.admin('/anvil/api/shop')).json();
      expect(['old', 'new']).toContain(variant);
      if (variant === 'old') expect(record.release).toBe(before.release);
      const { tmp, releases } = leftovers(anvil.dataDir);
      expect(tmp).toEqual([]);
      expect(releases.sort()).toEqual([record.release, ...record.releases].sort());
    });
  }
});
