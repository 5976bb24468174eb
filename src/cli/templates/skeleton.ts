import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The dev key of the skeleton (Maps/dev/main.json); pro has none until the author sets one. */
export const SKELETON_DEV_KEY = 'dev-key-change-me';

/** The typings of custom directives, copied next to them so an editor finds them. */
function directiveTypings(): string {
  const file = join(dirname(fileURLToPath(import.meta.url)), '../../../sandbox/directive.d.ts');
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return 'export type Directive<Config = Record<string, unknown>> = (state: any, config: Config) => void | Promise<void>;\n';
  }
}

/** `anvil create-api <name>`: every file of a new API folder, by relative path. */
export function skeletonFiles(name: string): Record<string, string> {
  return {
    'api.yaml': `# ${name}: an Anvil API (created by \`anvil create-api\`). Every request runs \`before\`, then the
# entries of its endpoint, then \`after\` — one list, in order (SPEC §3, §4).
key: ${name}

# Every endpoint needs the header api-key: ${SKELETON_DEV_KEY} in dev (Maps/dev/main.json).
# Maps/pro/main.json has no key yet, so in pro every call is refused (401) until you set one.
before:
  CheckKey: { directive: CheckKey, expected: $.map.main.apiKey, current: $.message.header.api-key }

# A failing entry switches to ERROR_FLOW: OnError renders {"error": "..."} with its status.
# Log writes a JSON line per request, after the response (AFTER_FLOW).
after:
  OnError: { directive: OnError, groups: [ERROR_FLOW] }
  Log: { directive: Log, groups: [AFTER_FLOW] }

# "<verb> <path>": label -> entry. A parameter starting with $. is an alias, read when the entry runs.
endpoints:
  get /ping:
    Ping: { directive: Ping }

  # Hello is a custom directive: Directives/Hello.ts. It counts greetings in the API's own
  # database, whose table comes from the migration Assets/db/001-init.sql.
  get /hello/{name}:
    Hello: { directive: Hello, name: $.message.pathParam.name, greeting: $.map.main.greeting }
`,
    'Directives/Hello.ts': `// A custom directive: the default export of Directives/<Name>.ts is the directive <Name>.
// It runs in the API's own V8 isolate: no Node API, no imports (\`import type\` is fine: types
// are erased), everything through \`state\` (see Directives/directive.d.ts). Its module is
// evaluated once per isolate, so module-level variables may keep values between calls on the same
// thread, and may be reset at any time: keep what must last in \`state.db\` or \`state.memory\`.
import type { Directive } from './directive';

const Hello: Directive<{ name: string; greeting: string | null }> = (state, config) => {
  const name = config.name.trim();
  // \`return state.fail(…)\`: TypeScript then knows that nothing after it runs.
  if (name.length === 0 || name.length > 40) return state.fail(400, 'name must have 1 to 40 characters');

  // The table comes from Assets/db/001-init.sql, applied on the first use of the database.
  state.db.run(
    'INSERT INTO greetings (name, count) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET count = count + 1',
    [name],
  );
  const row = state.db.get('SELECT count FROM greetings WHERE name = ?', [name]);
  if (row === null) return state.fail(500, 'the greeting was not counted');

  // A body set to an object is sent as JSON.
  state.message.body = { message: \`\${config.greeting ?? 'Hello'}, \${name}!\`, times: row.count };
};
export default Hello;
`,
    'Directives/directive.d.ts': directiveTypings(),
    'Maps/main.json': `${JSON.stringify({ greeting: 'Hello', apiKey: '' }, null, 2)}\n`,
    'Maps/dev/main.json': `${JSON.stringify({ apiKey: SKELETON_DEV_KEY }, null, 2)}\n`,
    'Maps/pro/main.json': `${JSON.stringify({ greeting: 'Welcome', apiKey: '' }, null, 2)}\n`,
    'Assets/db/001-init.sql': `-- Migrations run in file-name order, each once, in a transaction of its own. Never edit a
-- deployed migration: add 002-....sql instead.
CREATE TABLE greetings (
  name  TEXT PRIMARY KEY,
  count INTEGER NOT NULL
);
`,
    'tests/hello.yaml': `# Run with \`anvil test\` (docs/testing.md): each case starts from a fresh database and key
# space, in this process, on the engine and sandbox an instance runs. Not deployed.
cases:
  - name: every endpoint needs the dev key
    request: { path: /ping }
    expect: { status: 401 }

  - name: ping answers
    request: { path: /ping, headers: { api-key: ${SKELETON_DEV_KEY} } }
    expect: { status: 200, body: { message: pong } }

  - name: hello counts each greeting
    steps:
      - request: { path: /hello/Ann, headers: { api-key: ${SKELETON_DEV_KEY} } }
        expect: { status: 200, body: { message: "Hello, Ann!", times: 1 } }
      - request: { path: /hello/Ann, headers: { api-key: ${SKELETON_DEV_KEY} } }
        expect: { body: { times: 2 } }

  - name: a name longer than 40 characters is refused
    request: { path: /hello/${'x'.repeat(41)}, headers: { api-key: ${SKELETON_DEV_KEY} } }
    expect: { status: 400, body: { error: name must have 1 to 40 characters } }
`,
    'README.md': `# ${name}

An [Anvil](https://example.invalid/anvil) API. Only \`api.yaml\`, \`Directives/\`, \`Maps/\` and \`Assets/\`
are deployed; this README and \`tests/\` are not.

| file | what |
|---|---|
| \`api.yaml\` | the endpoints and the \`before\`/\`after\` entries every request runs |
| \`Directives/Hello.ts\` | a custom directive (\`directive.d.ts\`: its typings) |
| \`Maps/main.json\` | configuration, read as \`$.map.main.…\`; \`Maps/dev/\`, \`Maps/pro/\` override it per env |
| \`Assets/db/001-init.sql\` | the first migration of the API's database |
| \`tests/hello.yaml\` | its tests: requests and what their answers must hold (\`anvil test\`) |

\`\`\`sh
anvil validate ${name}             # the server's checks, locally: file:line:col [label] message
anvil test ${name}                 # tests/*.yaml, in-process: no instance needed
anvil deploy ${name} dev           # DEPLOY_ENDPOINT_DEV, PUBLIC_HOST_DEV, API_KEY_DEV from ./.env
anvil publish ${name} dev          # private until published
curl -H 'api-key: ${SKELETON_DEV_KEY}' http://localhost:8080/${name}/hello/Ann
\`\`\`
`,
  };
}
