/**
 * One forwarded exchange through @fastify/reply-from (which @fastify/http-proxy registers): instead
 * of streaming the upstream's answer to the client, it is read into memory under a size cap and a
 * deadline that covers the whole answer, so the gateway can check it, store it for idempotent
 * replays and turn failures into its own problems. Nothing of the upstream's headers reaches the
 * reply here.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { FastifyHttpProxyOptions } from '@fastify/http-proxy';
import { DeadlineExceeded } from '../../src/upstream/exchange.js';

/** reply.from's options (@fastify/reply-from, through @fastify/http-proxy). */
export type ReplyOptions = NonNullable<FastifyHttpProxyOptions['replyOptions']>;

export interface Captured {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * Why no answer could be read: `unreachable` (refused, no route, connect timeout: nothing was
 * sent), `timeout` (the deadline passed), `broken` (the connection broke, before or during the
 * answer), `too_large` (the cap was passed), `invalid` (an answer HTTP cannot carry), `dropped`
 * (it came, but the client had closed its connection: reply-from throws it away).
 */
export type CaptureFailureKind = 'unreachable' | 'timeout' | 'broken' | 'too_large' | 'invalid' | 'dropped';

export class CaptureFailure extends Error {
  constructor(
    readonly kind: CaptureFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'CaptureFailure';
  }
}

export interface CaptureLimits {
  deadlineMs: number;
  maxBytes: number;
}

/** Errors whose request never reached the upstream. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** The dispatcher abandoned the request at its deadline (src/upstream/deadline-dispatcher.ts), before or during the answer. */
function isDeadline(error: Error): boolean {
  return error instanceof DeadlineExceeded || error.cause instanceof DeadlineExceeded;
}

/** reply-from wraps the transport's error; its `cause` tells what happened. */
function failureOf(error: Error & { code?: string; cause?: unknown }): CaptureFailure {
  const cause = (error.cause ?? {}) as { code?: string; message?: string };
  const code = cause.code ?? error.code ?? '';
  const text = `${code}: ${cause.message ?? error.message}`;
  if (isDeadline(error)) return new CaptureFailure('timeout', text);
  if (UNREACHABLE_CODES.has(code) || error.code === 'FST_REPLY_FROM_SERVICE_UNAVAILABLE') return new CaptureFailure('unreachable', text);
  if (error.code === 'FST_REPLY_FROM_GATEWAY_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT') return new CaptureFailure('timeout', text);
  if (error.code === 'FST_REPLY_FROM_BAD_GATEWAY') return new CaptureFailure('invalid', 'the upstream answered with an invalid status code');
  return new CaptureFailure('broken', text);
}

/** Sends `source` upstream with `options` and resolves with the whole answer, or rejects with a CaptureFailure. */
export function capture(reply: FastifyReply, source: string, options: ReplyOptions, limits: CaptureLimits): Promise<Captured> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let body: Readable | undefined;
    const settle = (outcome: { answer: Captured } | { failure: CaptureFailure }): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if ('answer' in outcome) resolve(outcome.answer);
      else {
        body?.destroy();
        reject(outcome.failure);
      }
    };
    // The whole answer, not only its headers: a body dripping in must not hold the request.
    const timer = setTimeout(() => settle({ failure: new CaptureFailure('timeout', `no whole answer within ${limits.deadlineMs} ms`) }), limits.deadlineMs);

    const read = (stream: Readable, status: number, headers: IncomingHttpHeaders): void => {
      body = stream;
      if (settled) {
        stream.destroy();
        return;
      }
      const declared = Number(headers['content-length']);
      if (declared > limits.maxBytes) {
        settle({ failure: new CaptureFailure('too_large', `declared ${declared} bytes, more than ${limits.maxBytes}`) });
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limits.maxBytes) settle({ failure: new CaptureFailure('too_large', `more than ${limits.maxBytes} bytes`) });
        else chunks.push(chunk);
      });
      stream.once('end', () => settle({ answer: { status, headers, body: Buffer.concat(chunks) } }));
      stream.once('error', (error: Error & { code?: string }) => {
        const kind = error.code === 'UND_ERR_BODY_TIMEOUT' || isDeadline(error) ? 'timeout' : 'broken';
        settle({ failure: new CaptureFailure(kind, `the answer was cut off: ${error.code ?? ''} ${error.message}`) });
      });
    };

    try {
      reply.from(source, {
        ...options,
        // Undici's own per-phase timeouts, as a backstop of the deadline above.
        timeout: limits.deadlineMs,
        // Called with every answer, before reply-from drops one whose client is gone (raw.aborted)
        // without calling onResponse or onError: unsettled, it waited for the deadline and was
        // counted a timeout, a down-signal for an upstream that answered. None of its headers is copied.
        rewriteHeaders: () => {
          if (reply.request.raw.aborted) settle({ failure: new CaptureFailure('dropped', 'answered after the client closed its connection') });
          return {};
        },
        onError: (_reply, { error }) => settle({ failure: failureOf(error as Error) }),
        onResponse: (_request, _reply, res) => {
          const upstream = res as unknown as { statusCode: number; headers: IncomingHttpHeaders; stream: Readable };
          read(upstream.stream, upstream.statusCode, upstream.headers);
        },
      });
    } catch (error) {
      settle({ failure: new CaptureFailure('invalid', `the request could not be built: ${(error as Error).message}`) });
    }
  });
}
