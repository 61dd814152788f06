/**
 * Log lines about an upstream call name the trace of the request it served: the client's own
 * lines, and a circuit breaker's (opened, half-open, closed), which name the call that moved it.
 */
import type { BackendLogger } from '../backend/logger.js';
import type { TraceContext } from '../ops/trace.js';

/** A log line's fields, with the trace id of the call it is about. */
export function withTrace(line: object, trace: TraceContext | undefined): object {
  return trace === undefined ? line : { ...line, trace_id: trace.traceId };
}

export interface TracedReports<L extends BackendLogger | undefined> {
  /** The logger to give a circuit breaker: its lines name the trace of the call being reported. */
  logger: L;
  /** Tells the breaker (`tell`, synchronous: an admission or an outcome) on behalf of the call with this trace. */
  report<T>(trace: TraceContext | undefined, tell: () => T): T;
}

/** A breaker's log lines (opened, half-open, closed) name the trace of the call that moved it. */
export function tracedReports<L extends BackendLogger | undefined>(logger: L): TracedReports<L> {
  let reporting: TraceContext | undefined;
  const traced = logger && {
    ...(logger.info ? { info: (line: object, msg: string) => logger.info?.(withTrace(line, reporting), msg) } : {}),
    warn: (line: object, msg: string) => logger.warn(withTrace(line, reporting), msg),
    error: (line: object, msg: string) => logger.error(withTrace(line, reporting), msg),
  };
  return {
    logger: traced as L,
    report(trace, tell) {
      reporting = trace;
      try {
        return tell();
      } finally {
        reporting = undefined;
      }
    },
  };
}
