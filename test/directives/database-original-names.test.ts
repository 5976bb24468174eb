import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';

// The original's setup endpoints create and migrate the database themselves; in Anvil the
// database exists and is migrated when first opened, and these two directives do just that.

const API = {
  'api.yaml': `key: setup
endpoints:
  post /setup:
    Create: { directive: DatabaseCreate }
    Migrate: { directive: DatabaseMigrate }
    Reply: { directive: ModifyMessage, body: { ready: true } }
  get /rows:
    Count: { directive: DatabaseQuery, sql: "SELECT count(*) AS n FROM seeded", target: count, mode: get }
    Reply: { directive: ModifyMessage, body: $.memory.count }
`,
  'Assets/sql/001-seed.sql':
    'CREATE TABLE seeded (id INTEGER PRIMARY KEY);\nINSERT INTO seeded (id) VALUES (1), (2);\n',
};

describe("the original's DatabaseCreate and DatabaseMigrate", () => {
  let anvil: InProcessApis;
  beforeAll(async () => {
    anvil = await startInProcess({ apis: { setup: API } });
  });
  afterAll(async () => anvil?.dispose());

  it('open and migrate the API database, once however often they run', async () => {
    for (let i = 0; i < 2; i++)
      expect((await anvil.request('/setup/setup', { method: 'POST' })).json()).toEqual({ ready: true });
    expect((await anvil.request('/setup/rows')).json()).toEqual({ n: 2 });
  });
});
