// Checks the JSON body of POST, PUT and PATCH before anything touches the database, and stores
// the cleaned fields in memory `input` for CreateUser / UpdateUser.
//
//   { directive: ValidateUser }                  name and email both required (create, replace)
//   { directive: ValidateUser, partial: true }   only the fields given, at least one (patch)
//
// Every problem is collected, so the client can fix them all at once. The reply is a 400:
//   {"error": "invalid user: name must not be empty; email must be an email address ...",
//    "problems": [{"field": "name", "message": "must not be empty"}, ...]}
// `error` comes from state.fail and OnError; `problems` is added by AddProblems in ERROR_FLOW.
//
// TypeScript is transpiled when the API is deployed. The import below is for your editor only:
// `import type` is erased, and a directive may not import anything at run time.
import type { DirectiveState, Value } from '../../../sandbox/directive.js';

const FIELDS = ['name', 'email'];
const NAME_MAX = 100;
const EMAIL_MAX = 200;
// Plausible, not RFC 5322: something@something.tld without spaces. Only sending a mail proves more.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** One thing wrong with the body; `field` is "body" when it is the body as a whole. */
type Problem = { field: string; message: string };

export default function ValidateUser(state: DirectiveState, config: { partial?: boolean }): void {
  const partial = config.partial === true;
  const body = state.message.body; // a JSON body arrives parsed; anything else as text, or null
  const problems: Problem[] = [];
  const input: Record<string, string> = {};

  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    const expected = partial ? 'at least one of name, email' : 'name and email';
    problems.push({ field: 'body', message: `must be a JSON object with ${expected}` });
  } else {
    const name = text(body, 'name', NAME_MAX, partial, problems);
    if (name !== undefined) input.name = name;

    let email = text(body, 'email', EMAIL_MAX, partial, problems);
    if (email !== undefined && !EMAIL.test(email)) {
      problems.push({ field: 'email', message: 'must be an email address such as ada@example.com' });
      email = undefined;
    }
    // Lower case, so that the UNIQUE index also catches Ada@Example.com next to ada@example.com.
    if (email !== undefined) input.email = email.toLowerCase();

    // Refuse what we do not know, rather than silently dropping it (a typo like "emial").
    for (const field of Object.keys(body)) {
      if (!FIELDS.includes(field)) problems.push({ field, message: 'is not a field of a user (name, email)' });
    }
    if (partial && Object.keys(body).length === 0) {
      problems.push({ field: 'body', message: 'must have at least one of name, email' });
    }
  }

  if (problems.length > 0) {
    // Memory survives the failure: AddProblems reads it in ERROR_FLOW.
    state.memory.set('problems', problems);
    state.fail(400, `invalid user: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`);
  }
  state.memory.set('input', input);
}

/** The field as a trimmed, non-empty string of at most `max` characters; undefined if absent or bad. */
function text(body: { [key: string]: Value }, field: string, max: number, partial: boolean, problems: Problem[]): string | undefined {
  if (!Object.hasOwn(body, field)) {
    if (!partial) problems.push({ field, message: 'is required' });
    return undefined;
  }
  const value = body[field];
  if (typeof value !== 'string') {
    problems.push({ field, message: 'must be a string' });
    return undefined;
  }
  const trimmed = value.trim();
  if (trimmed === '') {
    problems.push({ field, message: 'must not be empty' });
    return undefined;
  }
  // [...s] counts characters (code points), not UTF-16 units: an emoji is one character.
  if ([...trimmed].length > max) {
    problems.push({ field, message: `must be at most ${max} characters` });
    return undefined;
  }
  return trimmed;
}
