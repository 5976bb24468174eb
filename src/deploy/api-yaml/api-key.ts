/** What an API's `key` may be: its URL segment and its folder name. (A module of its own: the CLI reads it without loading the YAML and schema code.) */
export const API_KEY_PATTERN = '^[a-z0-9][a-z0-9-]{0,62}$';
export const API_KEY = new RegExp(API_KEY_PATTERN);
export const RESERVED_KEYS: ReadonlySet<string> = new Set(['anvil']);
