/**
 * The type check of an API folder's TypeScript directives (`Directives/*.ts`), as `tsc --strict
 * --noEmit` would make it for code that runs in the API's isolate: the standard library of
 * ES2022 and nothing else (no DOM, no Node: an isolate has neither), the folder's own typings
 * (`Directives/directive.d.ts`, or the `sandbox/directive.d.ts` a directive in this clone imports).
 * A deploy compiles directives with esbuild, which strips types without checking them; this is
 * where a type error is caught, before anything is sent.
 */
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';

/** Each type error as `Directives/<file>:<line>:<col> <message> (TS<code>)`; none when the folder has no .ts directive. */
export async function typecheckDirectives(folder: string): Promise<string[]> {
  let names: string[];
  try {
    names = (await readdir(join(folder, 'Directives'))).filter((n) => n.endsWith('.ts') && !n.endsWith('.d.ts')).sort();
  } catch {
    return [];
  }
  if (names.length === 0) return [];
  // Loaded only here: ~40 ms to load, ~1 s for a first program; a folder without TypeScript pays nothing.
  const ts = (await import('typescript')).default;
  const options: import('typescript').CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts'],
    types: [],
    skipLibCheck: true,
    isolatedModules: true,
    noFallthroughCasesInSwitch: true,
  };
  const program = ts.createProgram(
    names.map((n) => join(folder, 'Directives', n)),
    options,
  );
  const errors: string[] = [];
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    if (diagnostic.category !== ts.DiagnosticCategory.Error) continue;
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    if (diagnostic.file === undefined || diagnostic.start === undefined) {
      errors.push(`Directives: ${message} (TS${diagnostic.code})`);
      continue;
    }
    const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    errors.push(
      `${relative(folder, diagnostic.file.fileName)}:${line + 1}:${character + 1} ${message} (TS${diagnostic.code})`,
    );
  }
  return errors;
}
