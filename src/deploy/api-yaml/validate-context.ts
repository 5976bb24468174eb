import type { DirectiveChecks } from '../../engine/directive-types.js';
import type { YamlLimits } from '../../shared/api-model/input-limits.js';

/** What validating an api.yaml needs to know besides its text: the API's folder and the built-ins. */
export interface ValidateContext {
  /** The file name shown in errors, e.g. `api.yaml`. */
  file: string;
  /** Names of the API's maps (`Maps/<name>.json`), for `$.map.<name>` aliases. */
  mapNames: ReadonlySet<string>;
  /** Names of the API's custom directives (`Directives/<Name>.js|.ts`): they accept any parameters. */
  customDirectives: ReadonlySet<string>;
  /** Names of the original's `Directives/<Name>.php` files: never run, to be translated. */
  phpDirectives?: ReadonlySet<string>;
  /** The built-in directives: their parameter schemas and deploy-time checks. */
  directives: ReadonlyMap<string, DirectiveChecks>;
  /** The maps' content, for the directives' deploy-time checks (`checkRelease`); without it they are skipped. */
  maps?: Readonly<Record<string, unknown>>;
  /**
   * Whether the instance has the cluster's Postgres (DATABASE_URL): false refuses `database: postgres`
   * at its line; undefined does not check (`anvil validate` checks the folder, not an instance).
   */
  postgres?: boolean;
  /** Structural limits of the file; YAML_LIMITS (input-limits.ts) when not given. */
  limits?: YamlLimits;
}
