import { CallBudget, DEFAULT_BUS_CALLS_PER_REQUEST } from './call-budget.js';
import { Errors } from '../shared/errors.js';
import type { DirectiveLookup } from './compiled-entry.js';
import type { Continuation } from './continuation.js';
import type {
  ApiRuntime,
  DirectiveContext,
  ErrorRenderer,
  FlowError,
  RequestFacts,
  StepWatcher,
  TraceStep,
} from './context.js';
import { Groups } from './groups.js';
import { HeldResources } from './held-resources.js';
import { HostMemoryBudget } from './host-memory.js';
import { Memory } from './memory.js';
import type { Message } from './message.js';
import type { OutgoingResponse } from '../shared/protocol/requests.js';
import { checkParams } from './param-check.js';
import type { ResolveScope } from './resolve.js';
import { originalSystemKey, systemMemory } from './system-memory.js';
import type { TraceSpan } from '../shared/tracing/trace-span.js';

/** The state of one request as it goes through the flow; directives see it as a DirectiveContext. */
export class RequestContext implements DirectiveContext, ResolveScope {
  readonly groups = new Groups();
  readonly trace: TraceStep[] = [];
  readonly held = new HeldResources();
  error: FlowError | null = null;
  sent: OutgoingResponse | null = null;
  errorRenderer: ErrorRenderer | null = null;
  stepWatcher: StepWatcher | null = null;
  readonly memory: Memory;
  /** The key of the entry running now (set by the engine), where a continuation resumes after. */
  entryKey = '';
  /** The directives of the release, for runDirective (set by the engine). */
  lookup: DirectiveLookup = () => undefined;
  /** Tracing on: the request's span (set by the engine), and the running entry's (null between entries). */
  requestSpan: TraceSpan | null = null;
  entrySpan: TraceSpan | null = null;
  /** Set by the engine from the request's budget. */
  busCalls = new CallBudget(DEFAULT_BUS_CALLS_PER_REQUEST);

  constructor(
    readonly message: Message,
    readonly api: ApiRuntime,
    readonly request: RequestFacts,
    readonly pathParams: Readonly<Record<string, string>>,
    restoredMemory?: Record<string, unknown>,
  ) {
    const budget = new HostMemoryBudget(api.hostMemoryBytes);
    message.budget = budget;
    this.memory = new Memory(restoredMemory ?? systemMemory(api, request), budget, originalSystemKey);
  }

  get id(): string {
    return this.request.id;
  }

  /** The running entry's span; the request's outside entries (an error being rendered). */
  get traceSpan(): TraceSpan | null {
    return this.entrySpan ?? this.requestSpan;
  }

  get maps(): Readonly<Record<string, unknown>> {
    return this.api.maps;
  }

  async runDirective(name: string, params: Record<string, unknown>, where: string): Promise<void> {
    const directive = this.lookup(name);
    if (directive === undefined) throw Errors.unknownDirective(name, where);
    checkParams(directive, params, where);
    await directive.run(this, params);
  }

  fail(status: number, message: string): never {
    throw Errors.fail(status, message);
  }

  continuation(): Continuation {
    return {
      format: 1,
      endpoint: this.request.route,
      after: this.entryKey,
      // A deep copy through JSON: what the job gets is what memory held at this moment.
      memory: JSON.parse(JSON.stringify(this.memory.data)) as Record<string, unknown>,
      message: this.message.snapshot(),
      pathParams: { ...this.pathParams },
      ip: this.request.ip,
    };
  }
}
