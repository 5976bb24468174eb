import { Context, Liquid, toPromise, toValue, type Emitter, type Template } from 'liquidjs';
import { AnvilError, Errors } from '../../shared/errors.js';
import { SafeHtml, escapeHtml } from './html.js';
import { formatBytes, VIEW_LIMITS, type ViewLimits } from './limits.js';
import { assetNameProblem, templateFile } from './names.js';
import { ViewFiles } from './view-files.js';

/**
 * Liquid for untrusted templates (SPEC §7 View, SECURITY.md). One engine per API release and actor
 * thread (an `ApiRuntime.resource`): it owns the template files it read and the parsed templates.
 *
 * - Files: only `Assets/views` through {@link ViewFiles}; `relativeReference` off; names checked.
 * - Output: `{{ … }}` is HTML-escaped unless the value is {@link SafeHtml} (fragments, `| escape`)
 *   or ends in `| raw`.
 * - Bounds, shared by every template of one {@link ViewSession}: liquidjs `renderLimit` (wall
 *   time), `memoryLimit` (allocation counter) and `parseLimit`; the page's size; and the text all
 *   emitters may produce together (captures included).
 */
export class ViewEngine {
  readonly files: ViewFiles;
  readonly liquid: Liquid;

  constructor(
    viewsDir: string,
    readonly limits: ViewLimits = VIEW_LIMITS,
  ) {
    this.files = new ViewFiles(viewsDir, limits);
    this.liquid = new Liquid({
      fs: this.files,
      root: ['.'],
      partials: ['.'],
      layouts: ['.'],
      extname: '.liquid',
      relativeReference: false,
      dynamicPartials: true,
      cache: limits.parsedTemplates,
      ownPropertyOnly: true,
      strictFilters: false,
      strictVariables: false,
      outputEscape: escapeOutput,
      parseLimit: limits.templateBytes,
      renderLimit: limits.renderMs,
      memoryLimit: limits.memoryUnits,
      // Dates render in UTC, whatever the host's zone.
      timezoneOffset: 0,
    });
    // Already-escaped text must not be escaped a second time on output.
    this.liquid.registerFilter('escape', markEscaped);
    this.liquid.registerFilter('xml_escape', markEscaped);
    this.liquid.registerFilter('escape_once', escapeOnce);
    // Every emitter liquidjs makes on its own (capture, include's file name…) counts its text too.
    const renderer = this.liquid.renderer;
    // Nesting (blocks in blocks, includes in includes) is bounded too: a template that includes
    // itself stops at once instead of growing the stack until the clock runs out.
    const renderTemplates = renderer.renderTemplates;
    const maxDepth = limits.nestingDepth;
    renderer.renderTemplates = function* (templates: Template[], ctx: Context, emitter?: Emitter) {
      const budget = budgetOf(ctx);
      if (budget.depth >= maxDepth) throw new NestingLimitError();
      budget.depth++;
      try {
        return yield* renderTemplates.call(renderer, templates, ctx, emitter ?? new BoundedEmitter(budget, Infinity));
      } finally {
        budget.depth--;
      }
    };
  }

  /** True when `Assets/views/<name>.liquid` exists (and `name` is an allowed name). */
  exists(name: string): boolean {
    return assetNameProblem(name) === null && this.files.existsSync(templateFile(name));
  }

  /** A budget for the templates of one request. */
  session(): ViewSession {
    return new ViewSession(this);
  }
}

/** Private: thrown by an emitter over its bound; liquidjs wraps it and {@link describe} finds it again (ANVIL_ERR_VIEW). */
class OutputLimitError extends Error {}

/** Private: thrown when templates nest deeper than the limit; {@link describe} turns it into ANVIL_ERR_VIEW. */
class NestingLimitError extends Error {}

interface Budget {
  emitted: number;
  readonly maxEmitted: number;
  /** Current nesting of template lists being rendered. */
  depth: number;
}

/** The budget of a render, found from its context: child contexts share the parent's limiters. */
const budgets = new WeakMap<object, Budget>();

function budgetOf(ctx: Context): Budget {
  let budget = budgets.get(ctx.memoryLimit);
  if (budget === undefined) {
    budget = { emitted: 0, maxEmitted: VIEW_LIMITS.emittedChars, depth: 0 };
    budgets.set(ctx.memoryLimit, budget);
  }
  return budget;
}

/** The renders of one request: one clock, one allocation counter, one emitted-text budget. */
export class ViewSession {
  private limiters: { memoryLimit: Context['memoryLimit']; renderLimit: Context['renderLimit'] } | null = null;
  private budget: Budget;

  constructor(private readonly engine: ViewEngine) {
    this.budget = { emitted: 0, maxEmitted: engine.limits.emittedChars, depth: 0 };
  }

  /**
   * Renders `Assets/views/<name>.liquid` with `scope` as its variables. Throws ANVIL_ERR_VIEW
   * (`Errors.viewFailed`, a 500) naming the template when it is missing, fails to parse or render,
   * or exceeds a limit.
   */
  async render(name: string, scope: Record<string, unknown>): Promise<string> {
    const { files, liquid, limits } = this.engine;
    const file = templateFile(name);
    const where = `Assets/views/${file}`;
    try {
      if (assetNameProblem(name) !== null || !files.existsSync(file))
        throw Errors.viewFailed(`template ${where} not found`);
      const templates = await liquid.parseFile(name);
      const ctx = new Context(scope, liquid.options, { sync: false }, { liquid, ...this.limiters });
      if (this.limiters === null) {
        this.limiters = { memoryLimit: ctx.memoryLimit, renderLimit: ctx.renderLimit };
        budgets.set(ctx.memoryLimit, this.budget);
      }
      const emitter = new BoundedEmitter(this.budget, limits.outputBytes);
      const output = String(await toPromise(liquid.renderer.renderTemplates(templates, ctx, emitter)));
      if (Buffer.byteLength(output) > limits.outputBytes) throw new OutputLimitError('output');
      return output;
    } catch (error) {
      // Only the missing template's error is ours already; the rest come from liquidjs or a bound.
      if (error instanceof AnvilError) throw error;
      throw describe(error, where, limits);
    }
  }
}

/**
 * An emitter with bounds: `maxChars` for its own text (the page: a cheap early stop before the
 * exact byte count), and the request's budget for all text emitted anywhere.
 */
class BoundedEmitter implements Emitter {
  buffer = '';

  constructor(
    private readonly budget: Budget,
    private readonly maxChars: number,
  ) {}

  write(html: unknown): void {
    const text = stringify(html);
    if (text.length === 0) return;
    this.budget.emitted += text.length;
    if (this.budget.emitted > this.budget.maxEmitted) throw new OutputLimitError('emitted');
    if (this.buffer.length + text.length > this.maxChars) throw new OutputLimitError('output');
    this.buffer += text;
  }
}

/** liquidjs' own stringification of an emitted value. */
function stringify(value: unknown): string {
  const v = toValue(value);
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) return v.map(stringify).join('');
  return String(v);
}

interface FilterThis {
  context: Context;
}

function charge(self: FilterThis, length: number): void {
  self.context.memoryLimit.use(length);
}

/** The View's `outputEscape`: SafeHtml as it is, anything else escaped. */
function escapeOutput(this: FilterThis, value: unknown): string {
  if (value instanceof SafeHtml) return value.html;
  const text = stringify(value);
  charge(this, text.length);
  return escapeHtml(text);
}

function markEscaped(this: FilterThis, value: unknown): SafeHtml {
  if (value instanceof SafeHtml) return value;
  const text = stringify(value);
  charge(this, text.length);
  return new SafeHtml(escapeHtml(text));
}

function escapeOnce(this: FilterThis, value: unknown): SafeHtml {
  if (value instanceof SafeHtml) return value;
  const text = stringify(value);
  charge(this, text.length);
  return new SafeHtml(escapeHtml(unescapeHtml(text)));
}

function unescapeHtml(text: string): string {
  return text.replace(
    /&(amp|lt|gt|quot|#39);/g,
    (_m, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[name] ?? _m,
  );
}

/** A liquidjs failure as ANVIL_ERR_VIEW, whose message names the template and, for a limit, the limit. */
function describe(error: unknown, where: string, limits: ViewLimits): AnvilError {
  const chain: unknown[] = [];
  for (
    let e: unknown = error;
    e !== null && e !== undefined && chain.length < 8;
    e = (e as { originalError?: unknown }).originalError
  )
    chain.push(e);
  const messages = chain.map((e) => (e instanceof Error ? e.message : String(e)));
  const output = chain.find((e): e is OutputLimitError => e instanceof OutputLimitError);
  if (output !== undefined) {
    return output.message === 'emitted'
      ? Errors.viewFailed(
          `${where}: text limit exceeded (templates may emit ${limits.emittedChars} characters per request, captures included)`,
        )
      : Errors.viewFailed(`${where}: output limit exceeded (a page may be ${formatBytes(limits.outputBytes)})`);
  }
  const has = (text: string) => messages.some((m) => m.includes(text));
  if (has('template render limit exceeded'))
    return Errors.viewFailed(`${where}: render time limit exceeded (${limits.renderMs} ms)`);
  if (has('memory alloc limit exceeded'))
    return Errors.viewFailed(`${where}: memory limit exceeded (${limits.memoryUnits} array elements or characters)`);
  if (has('parse length limit exceeded'))
    return Errors.viewFailed(`${where}: parse limit exceeded (a template may be ${formatBytes(limits.templateBytes)})`);
  if (chain.some((e) => e instanceof NestingLimitError))
    return Errors.viewFailed(`${where}: nesting limit exceeded (${limits.nestingDepth} levels of blocks and includes)`);
  if (chain.some((e) => e instanceof RangeError && /call stack/i.test(e.message)))
    return Errors.viewFailed(`${where}: templates nested too deeply`);
  // liquidjs says `ENOENT: Failed to lookup "x" in "."` for an include it could not (or may not) load.
  const message = (messages[0] ?? 'render failed').replace(
    /ENOENT: Failed to lookup "(.*?)" in "[^"]*"/,
    'no template "$1" under Assets/views',
  );
  return Errors.viewFailed(`${where}: ${message}`);
}
