import { startInstance } from '../helpers/instance.js';
import { apiDatabaseContract } from './api-database-contract.js';

// The contract of an API's database on its own SQLite file (the default mode).
apiDatabaseContract('sqlite', async (apis) => {
  const instance = await startInstance({ apis });
  return { instance, cleanup: () => instance.dispose() };
});
