/**
 * Forwarding to an upstream that speaks v1 itself (a `forwards` plugin, src/backend/registry.ts).
 * The gates stay here: key auth, scope, limits, validation, idempotency and the audit run as for any
 * endpoint (register.ts); a request that passes them is sent on by the forwarder, and its answer comes
 * back through the same output path (the response schema strips what the contract does not name,
 * idempotent answers are stored and replayed here). Endpoints marked `local` (health, the OpenAPI
 * document) are answered here; `passthrough` on an endpoint adds what this gateway decides itself.
 */
import type { FastifyInstance, FastifyReply, RouteOptions } from 'fastify';
import type { Endpoint, EndpointInput, GatewayDeps, HandlerResult } from './endpoint.js';
import type { Answer } from './register.js';

export interface ForwardCall extends EndpointInput {
  endpoint: Endpoint;
}

export interface Forwarder {
  readonly name: string;
  /** The longest a forwarded write may take; a sent write's idempotency claim settles a little longer. */
  readonly writeTimeoutMs: number;
  /** Registers one forwarded endpoint's route: its hooks and handler run as given. */
  mount(app: FastifyInstance, route: RouteOptions): void;
  /**
   * Sends the request upstream and returns the upstream's successful answer, its body valid for the
   * endpoint's response schema. Every failure leaves as an ApiError or a BackendError (a refusal the
   * upstream stands by: `not_found`, `conflict`). Calls `attempt.beforeWrite()` right before a write
   * leaves.
   */
  forward(call: ForwardCall, reply: FastifyReply): Promise<HandlerResult>;
  /** True when the upstream answers (readiness, health). Must not throw. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** How a forwarded endpoint answers: its own refusals, then the upstream, then its own part of the answer. */
export function forwardedAnswer(forwarder: Forwarder, endpoint: Endpoint, deps: GatewayDeps): Answer {
  const { passthrough } = endpoint;
  return async (input, reply) => {
    const ctx = { ...input, deps };
    passthrough?.refuse?.(ctx);
    const forwarded = forwarder.forward({ ...input, endpoint }, reply);
    let answer: HandlerResult;
    try {
      // Timed at the same edge as a Backend's calls (timedBackend): the forwarder's work counts as the backend's.
      answer = await (input.call.wait?.on(forwarded) ?? forwarded);
    } catch (error) {
      throw passthrough?.failure ? passthrough.failure(error, ctx) : error;
    }
    return passthrough?.answer ? passthrough.answer(answer, ctx) : answer;
  };
}
