/**
 * Traces through `@opentelemetry/api` only: every call is a no-op until the app installs an
 * OpenTelemetry SDK, which then receives one trace per task. The creating request's context
 * travels with the task (in the BullMQ job), so the run in a worker process joins that trace.
 */
import {
  type Attributes,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { isTaskPaused } from '../engine/errors.js';

const TRACER_NAME = 'mcp-task-server';

function tracer() {
  return trace.getTracer(TRACER_NAME);
}

/** The active trace context as a carrier (`traceparent`, ...), or `undefined` when nothing traces. */
export function captureTraceContext(): Record<string, string> | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

export interface SpanOptions {
  readonly attributes?: Attributes;
  readonly kind?: SpanKind;
  /** Start under this carried context instead of the active one (a run in another process). */
  readonly parent?: Readonly<Record<string, string>>;
}

/**
 * Runs `work` inside a span that ends when it settles. A throw marks the span as an error,
 * except a pause for input, which is how a run waits and not a failure.
 */
export async function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  const parent = options.parent ? propagation.extract(ROOT_CONTEXT, options.parent) : context.active();
  return tracer().startActiveSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, ...(options.attributes && { attributes: options.attributes }) },
    parent,
    async (span) => {
      try {
        return await work(span);
      } catch (error) {
        if (isTaskPaused(error)) {
          span.setAttribute('mcp.task.paused', true);
        } else {
          span.recordException(error instanceof Error ? error : String(error));
          span.setStatus({
            code: SpanStatusCode.ERROR,
            message: error instanceof Error ? error.message : String(error),
          });
        }
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

export { SpanKind, SpanStatusCode };
