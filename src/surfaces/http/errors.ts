import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { WarrenError } from '../../vocab/errors.ts';
import type { ErrorLog } from '../../vocab/public-error.ts';
import { databaseUnavailable, isDatabaseUnreachable } from '../../vocab/unreachable.ts';

/**
 * The router's cap on one path parameter, as sent (percent-encoded). Far above any id or name
 * the schemas accept (a 200-character stream name of 3-byte characters, encoded, is 1,800),
 * so the schema, not the router, says what is too long.
 */
export const MAX_PATH_PARAM = 2048;

/** A thrown thing as the typed error a client sees; anything unexpected is `internal`, no details. */
export function toWarrenError(error: unknown, bodyLimit: number): WarrenError {
  if (error instanceof WarrenError) return error;
  // The database could not be reached: retriable, not a bug of ours.
  if (isDatabaseUnreachable(error)) return databaseUnavailable();
  const fe = error as FastifyError;
  if (fe?.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return new WarrenError('invalid_input', 'send JSON (content-type: application/json)');
  if (fe?.code === 'FST_ERR_CTP_EMPTY_JSON_BODY')
    return new WarrenError('invalid_input', 'the JSON body is empty');
  if (fe?.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return new WarrenError('invalid_input', `the body is larger than the cap of ${bodyLimit} bytes`, {
      maxBytes: bodyLimit,
    });
  if (fe?.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH')
    return new WarrenError('invalid_input', 'the content-length does not match the body');
  if (fe?.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return new WarrenError('invalid_input', `a path parameter is longer than ${MAX_PATH_PARAM} characters`, {
      maxChars: MAX_PATH_PARAM,
    });
  if (fe?.code === 'FST_ERR_BAD_URL')
    return new WarrenError('invalid_input', 'a path parameter is not valid URL encoding');
  if (error instanceof SyntaxError) return new WarrenError('invalid_input', 'malformed JSON body');
  if (fe?.statusCode === 400) return new WarrenError('invalid_input', 'malformed request');
  return new WarrenError('internal', 'internal error');
}

/** Framework failures whose HTTP status says more than their code's. */
const HTTP_STATUS_OF: Record<string, number> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 413,
  FST_ERR_MAX_PARAM_LENGTH: 414,
};

/**
 * Every failure leaves as `{ error: { code, message, details?, requestId } }` with the status
 * that fits. Internals (stacks, exception text) go to the server log under the request id,
 * never to the client.
 */
export const errorHandler =
  (bodyLimit: number, log: ErrorLog) =>
  (error: unknown, req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    let we = toWarrenError(error, bodyLimit);
    if (we.code === 'internal') {
      log.error({ err: error, reqId: req.id }, 'unhandled error');
      we = new WarrenError('internal', `internal error (request ${req.id})`);
    }
    const status = HTTP_STATUS_OF[(error as FastifyError)?.code ?? ''] ?? we.status;
    if (we.code !== 'internal') req.log.debug({ code: we.code, status }, we.message);
    // Every 503 is retriable: say when (RFC 9110 §10.2.3), in whole seconds.
    if (status === 503) reply.header('retry-after', String(retryAfterOf(we)));
    return reply.status(status).send({ error: { ...we.toJSON(), requestId: req.id } });
  };

const retryAfterOf = (we: WarrenError): number => {
  const s = we.details?.retryAfterS;
  return typeof s === 'number' && Number.isFinite(s) && s > 0 ? Math.ceil(s) : 1;
};

/** Request ids: short, unguessable enough to quote in a bug report, never reused. */
export const requestIdOf = (): string => `req_${crypto.randomUUID().replaceAll('-', '').slice(0, 20)}`;
