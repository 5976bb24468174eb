import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { skeletonFiles } from '../../src/cli/templates/skeleton.js';

// What an author's editor and `tsc --strict` say of the directives create-api writes and of the
// `return state.fail(…)` form the typings and the README show (issue 45: a bare `state.fail()` did
// not narrow, TS18047 "'row' is possibly 'null'").

const dir = mkdtempSync(join(tmpdir(), 'anvil-typings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function diagnostics(files: Record<string, string>): string[] {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const roots = Object.keys(files)
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(dir, name));
  const program = ts.createProgram(roots, {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    skipLibCheck: false,
    types: [],
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        `${d.file?.fileName.slice(dir.length + 1) ?? ''} TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
    );
}

describe('custom directive typings', () => {
  const skeleton = skeletonFiles('hello');
  const typings = skeleton['Directives/directive.d.ts']!;

  it("create-api's Hello.ts type-checks under strict", () => {
    expect(diagnostics({ 'directive.d.ts': typings, 'Hello.ts': skeleton['Directives/Hello.ts']! })).toEqual([]);
  });

  it('`return state.fail(…)` narrows what the check was about; a bare call in a Directive<…> does not', () => {
    const directive = (fail: string) => `import type { Directive } from './directive';
const ReadUser: Directive<{ id: string }> = (state, config) => {
  const user = state.db.get('select id, name from users where id = ?', [config.id]);
  if (!user) ${fail}(404, 'user not found');
  state.memory.set('name', user.name);
};
export default ReadUser;
`;
    expect(diagnostics({ 'directive.d.ts': typings, 'ReadUser.ts': directive('return state.fail') })).toEqual([]);
    expect(diagnostics({ 'directive.d.ts': typings, 'ReadUser.ts': directive('state.fail') }).join('\n')).toContain(
      "TS18047: 'user' is possibly 'null'.",
    );
  });
});
