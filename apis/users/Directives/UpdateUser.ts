// PUT and PATCH /users/{id}: writes the fields ValidateUser checked (memory `input`) and stores the
// updated user in memory `user` for the YAML's Reply. 404 for an unknown id, 409 for a taken email.
//
// One fixed statement serves both verbs: coalesce(:name, name) keeps the current value when :name
// is null, i.e. when a PATCH did not send that field. (PUT always has both; ValidateUser refuses a
// null, so null can only mean "not given".) No SQL is ever assembled from pieces.
import type { DirectiveState } from '../../../sandbox/directive.js';

export default function UpdateUser(state: DirectiveState, config: { id: number }): void {
  const input = state.memory.get('input') as { name?: string; email?: string };
  const params = {
    id: config.id,
    name: input.name ?? null,
    email: input.email ?? null,
    now: new Date().toISOString(),
  };

  let user;
  try {
    user = state.db.get(
      `UPDATE users
          SET name = coalesce(:name, name), email = coalesce(:email, email), updated_at = :now
        WHERE id = :id
       RETURNING id, name, email, created_at, updated_at`,
      params,
    );
  } catch (error) {
    // The email belongs to another user: the UNIQUE index refuses it with a 409.
    if ((error as { status?: number }).status === 409) state.fail(409, `email ${input.email} is already taken`);
    throw error;
  }
  if (user === null) state.fail(404, `user ${config.id} not found`);
  state.memory.set('user', user);
}
