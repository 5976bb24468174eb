// POST /users: inserts the user ValidateUser checked (memory `input`), then answers
// 201 Created with the new user and a `location` header pointing at it.
import type { DirectiveState } from '../../../sandbox/directive.js';

export default async function CreateUser(state: DirectiveState): Promise<void> {
  const { name, email } = state.memory.get('input') as { name: string; email: string };
  const now = new Date().toISOString();

  let user;
  try {
    // Named parameters (:name) bound from an object. RETURNING gives the row as stored, id included.
    user = state.db.get(
      `INSERT INTO users (name, email, created_at, updated_at)
       VALUES (:name, :email, :now, :now)
       RETURNING id, name, email, created_at, updated_at`,
      { name, email, now },
    );
  } catch (error) {
    // A UNIQUE violation fails with status 409 and the message "SQL error: UNIQUE constraint
    // failed: users.email": right status, but database words. Say it in the client's terms.
    if ((error as { status?: number }).status === 409) state.fail(409, `email ${email} is already taken`);
    throw error; // anything else stays a 500 (the client sees a generic message; the log the real one)
  }
  if (user === null) state.fail(500, 'INSERT ... RETURNING gave no row');

  // Compose a built-in: ModifyMessage does exactly what its YAML form would do, and is awaited.
  // The location is built from the API's key (memory `anvil-api`), so a copy under another key works.
  await state.run('ModifyMessage', {
    status: 201,
    headers: { 'content-type': 'application/json', location: `/${state.memory.get('anvil-api')}/${user.id}` },
    body: user,
  });
}
