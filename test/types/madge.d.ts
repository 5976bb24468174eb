/** The part of madge's programmatic API the tests use (madge ships no types). */
declare module 'madge' {
  interface MadgeConfig {
    baseDir?: string;
    fileExtensions?: string[];
    /** A tsconfig file: its module resolution is used to find imported files. */
    tsConfig?: string;
    excludeRegExp?: RegExp[];
    detectiveOptions?: Record<string, unknown>;
  }

  interface MadgeResult {
    /** Every file (relative to the common base directory) and the files it imports. */
    obj(): Record<string, string[]>;
    /** Each cycle as the files it goes through, in order. */
    circular(): string[][];
    /** Imports that could not be resolved to a file. */
    warnings(): { skipped: string[] };
  }

  function madge(path: string | string[], config?: MadgeConfig): Promise<MadgeResult>;
  export default madge;
}
