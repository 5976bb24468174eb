import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';
import { waitFor } from '../helpers/wait-for.js';

// A custom directive that throws: its error names the author's file, line and column (issue 45),
// mapped back through the source map made at deploy (the code that runs is esbuild's output).

const TS = `import type { Directive } from './directive';

interface Row {
  id: number;
}

const Broken: Directive = (state) => {
  const rows: Row[] = [];
  state.memory.set('count', rows.length);
  throw new Error('no rows to show');
};
export default Broken;
`;

const JS = `// a comment that esbuild drops

export default function Nested(state) {
  const config = { deep: { value: null } };
  return config.deep.value.length;
}
`;

let anvil: InProcessApis;

beforeAll(async () => {
  anvil = await startInProcess({
    apis: {
      throwing: {
        'api.yaml':
          'key: throwing\ndebug: true\nendpoints:\n  get /ts:\n    Run: { directive: Broken }\n  get /js:\n    Run: { directive: Nested }\n',
        'Directives/Broken.ts': TS,
        'Directives/Nested.js': JS,
      },
    },
  });
});
afterAll(async () => anvil?.dispose());

describe("a custom directive's thrown error", () => {
  it('names the TypeScript file, line and column it was thrown at', async () => {
    const reply = await anvil.request('/throwing/ts');
    expect(reply.status).toBe(500);
    // debug: true shows 5xx messages to the client.
    expect(reply.json().error).toBe('Broken: no rows to show (at Directives/Broken.ts:10:9)');
  });

  it('names the JavaScript file of a TypeError, and the instance log has it too', async () => {
    const reply = await anvil.request('/throwing/js');
    expect(reply.status).toBe(500);
    expect(reply.json().error).toMatch(
      /^Nested: Cannot read properties of null \(reading 'length'\) \(at Directives\/Nested\.js:5:\d+\)$/,
    );
    await waitFor(() => anvil.logLines().find((line) => JSON.stringify(line).includes('(at Directives/Nested.js:5:')), {
      what: 'the log line with the position',
    });
  });
});
