/** What ValidateModel and LoadAndValidateModel share: the check of a model in a request, and at deploy. */
import type { DirectiveContext } from '../../engine/context.js';
import type { DeployIssue, ReleaseView } from '../../engine/directive-types.js';
import { Errors } from '../../shared/errors.js';
import { describeInvalid, ModelSchemas } from './model-schemas.js';
import { originalMessage } from './original-wording.js';

/**
 * Validates memory `name` against the map `name`. Invalid: 400 with ajv's message (the original's
 * words under `compat: hefesto`: original-wording.ts), or, with
 * `serverSideError` (the model came from an upstream, not from the client), 502 "Server Side
 * Error" and ajv's message in the instance log. A map that is missing or not a schema: 500.
 */
export function validateModel(ctx: DirectiveContext, directive: string, name: string, serverSideError: boolean): void {
  const schemas = ctx.api.resource(`model-schemas@${ctx.api.release}`, () => new ModelSchemas(ctx.api.maps));
  const model = schemas.get(name);
  if (!model.ok) throw Errors.modelSchema(directive, model.message);
  const value = ctx.memory.get(name);
  if (model.validate(value)) return;
  const first = model.validate.errors?.[0];
  const original =
    ctx.api.compat === 'hefesto' && first !== undefined ? originalMessage(first, value, ctx.api.maps[name]) : null;
  const message = original ?? describeInvalid(name, model.validate.errors);
  if (!serverSideError) throw Errors.modelInvalid(message);
  ctx.api.log('warn', `${directive}: the model is not valid (server-side-error: 502)`, { model: name, error: message });
  throw Errors.modelServerSide();
}

/** At deploy: a model named by a literal must have its map, and the map must compile as a schema. */
export function checkModelName(param: string, name: unknown, release: ReleaseView): DeployIssue[] {
  if (typeof name !== 'string' || name.startsWith('$.')) return []; // an alias: known per request only
  if (release.mapNames.has(name) && !Object.hasOwn(release.maps, name)) return []; // its file has an error already
  const model = release.memo('model-schemas', () => new ModelSchemas(release.maps)).get(name);
  return model.ok ? [] : [{ param, message: model.message }];
}

/** How LoadModel and LoadAndValidateModel fail on a body that is not JSON (see modelValue). */
export const BODY_NOT_JSON_FAILURE = {
  error: Errors.modelBodyNotJson,
  when: 'when `source` is `$.message.body` and the body starts like JSON but does not parse',
};

/**
 * What LoadModel and LoadAndValidateModel store for `source`. `$.message.body` is the body as text
 * (SPEC §3), but a model of a JSON body is about the parsed body: the whole body's text is stored
 * parsed when it is a JSON object or array, and a body that starts like one and does not parse is
 * a 400 that says so (not "… must be object"). Any other text stays text (a model of a string).
 */
export function modelValue(ctx: DirectiveContext, source: unknown): unknown {
  if (typeof source !== 'string' || source !== ctx.message.bodyText()) return source;
  const parsed = ctx.message.bodyJson();
  if (parsed !== null && typeof parsed === 'object') return parsed;
  if (!/^\s*[[{]/.test(source)) return source;
  try {
    JSON.parse(source);
  } catch (error) {
    throw Errors.modelBodyNotJson((error as Error).message);
  }
  return source;
}
