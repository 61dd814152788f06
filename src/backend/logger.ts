/**
 * The logger a backend and the upstream layer write to: the shape pino (and Fastify's logger)
 * already has, so the core hands its own logger in, and mappings never import a framework.
 */
export interface BackendLogger {
  /** Absent on minimal loggers: callers fall back to `warn` for lines that must be seen. */
  info?(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}
