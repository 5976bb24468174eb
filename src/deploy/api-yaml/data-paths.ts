import { join } from 'node:path';

/** Inside a release's folder: the deployed files, and the validated definition with its Maps. */
export const RELEASE_FILES_DIR = 'files';
export const COMPILED_FILE = 'compiled.json';

/**
 * Where everything lives under the data directory. Platform state sits under `.anvil/` (a name no
 * host can have); each API's own data under `<host>/<env>/<key>/`.
 */
export class DataPaths {
  constructor(readonly root: string) {}

  get platformDir(): string {
    return join(this.root, '.anvil');
  }

  get registryFile(): string {
    return join(this.platformDir, 'registry.sqlite');
  }

  /** The audit log of management actions (front/audit/sqlite-audit-store.ts). */
  get auditFile(): string {
    return join(this.platformDir, 'audit.sqlite');
  }

  get publicHostKeyFile(): string {
    return join(this.platformDir, 'public-host-key');
  }

  /** Held by the running instance: one instance per data directory. */
  get instanceLockFile(): string {
    return join(this.platformDir, 'instance.lock');
  }

  get tmpDir(): string {
    return join(this.platformDir, 'tmp');
  }

  releaseDir(host: string, key: string, release: string): string {
    return join(this.platformDir, 'releases', host, key, release);
  }

  /** The release's files as deployed (api.yaml, Directives, Maps, Assets). */
  releaseFiles(host: string, key: string, release: string): string {
    return join(this.releaseDir(host, key, release), RELEASE_FILES_DIR);
  }

  compiledFile(host: string, key: string, release: string): string {
    return join(this.releaseDir(host, key, release), COMPILED_FILE);
  }

  apiReleasesDir(host: string, key: string): string {
    return join(this.platformDir, 'releases', host, key);
  }

  apiDataDir(host: string, env: string, key: string): string {
    return join(this.root, host, env, key);
  }
}
