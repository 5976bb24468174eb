import { join } from 'node:path';
import type { ApiRuntime } from '../../engine/context.js';
import type { ViewEngine } from './engine.js';

/** The per-thread resource name of an API release's view engine. */
export const VIEW_ENGINE_RESOURCE = 'views';

/**
 * The view engine of this API release in this thread, made on first use. liquidjs is loaded only
 * then (it costs ~60 ms), so threads of APIs without views start as fast as before.
 */
export async function viewEngine(api: ApiRuntime): Promise<ViewEngine> {
  const { ViewEngine } = await import('./engine.js');
  return api.resource(VIEW_ENGINE_RESOURCE, () => new ViewEngine(join(api.releaseDir, 'Assets', 'views')));
}
