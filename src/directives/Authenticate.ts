import { Errors } from '../shared/errors.js';
import { safeEqual } from '../shared/security/safe-equal.js';
import { defineDirective } from '../engine/directive-types.js';

/**
 * `basic`: `users` maps user name → password. `bearer`: `tokens` maps token → principal (any value:
 * a name, an object), or is a list of tokens (the principal is then the token's position). The
 * principal goes to memory `user`. Every comparison is constant-time, and every candidate is
 * compared, so the answer time does not tell which part was wrong.
 */
export default defineDirective({
  name: 'Authenticate',
  summary:
    'HTTP Basic or Bearer authentication against `users` / `tokens` (usually from $.map…); 401 with www-authenticate otherwise.',
  example: { scheme: 'basic', users: '$.map.main.users', realm: 'reports' },
  memory: { writes: ['user'] },
  failures: [
    {
      error: Errors.unauthorized,
      when: 'without credentials, or with ones `users` / `tokens` do not hold (with www-authenticate)',
    },
  ],
  params: {
    type: 'object',
    properties: {
      scheme: { type: 'string', enum: ['bearer', 'basic'] },
      users: { type: ['object', 'null'], additionalProperties: { type: ['string', 'number'] }, writeOnly: true },
      tokens: {
        anyOf: [
          { type: 'object', additionalProperties: true },
          { type: 'array', items: { type: 'string' } },
          { type: 'null' },
        ],
        writeOnly: true,
      },
      realm: { type: 'string', pattern: '^[^"\\\\\\r\\n]*$' },
    },
    required: ['scheme'],
    additionalProperties: false,
  },
  describe: () => ({ responses: { 401: 'missing or wrong credentials (www-authenticate names the scheme)' } }),
  run(ctx, params) {
    const realm = params.realm ?? ctx.api.key;
    const refuse = (): never => {
      ctx.message.setHeader('www-authenticate', `${params.scheme === 'basic' ? 'Basic' : 'Bearer'} realm="${realm}"`);
      throw Errors.unauthorized();
    };
    const header = ctx.message.header('authorization');
    if (typeof header !== 'string') return refuse();
    const [scheme, credentials = ''] = header.trim().split(/\s+/, 2);

    if (params.scheme === 'basic') {
      if (scheme?.toLowerCase() !== 'basic') return refuse();
      const decoded = Buffer.from(credentials, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) return refuse();
      const name = decoded.slice(0, colon);
      const password = decoded.slice(colon + 1);
      let found = false;
      for (const [user, expected] of Object.entries(params.users ?? {})) {
        const match = safeEqual(user, name) && safeEqual(String(expected), password);
        found = found || match;
      }
      if (!found) return refuse();
      ctx.memory.set('user', name);
      return;
    }

    if (scheme?.toLowerCase() !== 'bearer' || credentials === '') return refuse();
    const entries: Array<[string, unknown]> = Array.isArray(params.tokens)
      ? params.tokens.map((token, index) => [token, index])
      : Object.entries(params.tokens ?? {});
    let principal: unknown;
    let found = false;
    for (const [token, who] of entries) {
      if (safeEqual(token, credentials) && !found) {
        found = true;
        principal = who;
      }
    }
    if (!found) return refuse();
    ctx.memory.set('user', principal ?? null);
  },
});
