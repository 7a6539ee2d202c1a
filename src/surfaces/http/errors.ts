import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { WarrenError } from '../../kernel/errors.ts';

/** Every failure leaves as `{ error: { code, message } }` with the status that fits. */
export function toWarrenError(error: unknown): WarrenError {
  if (error instanceof WarrenError) return error;
  const fe = error as FastifyError;
  if (fe?.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return new WarrenError('invalid_input', 'send JSON (content-type: application/json)');
  if (fe?.code === 'FST_ERR_CTP_EMPTY_JSON_BODY')
    return new WarrenError('invalid_input', 'the JSON body is empty');
  if (fe?.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return new WarrenError('invalid_input', 'the body is too large');
  if (fe?.statusCode === 400 || error instanceof SyntaxError) {
    return new WarrenError('invalid_input', `malformed request: ${fe.message}`);
  }
  return new WarrenError('internal', 'internal error');
}

export function errorHandler(error: unknown, req: FastifyRequest, reply: FastifyReply) {
  const we = toWarrenError(error);
  if (we.code === 'internal') req.log.error({ err: error }, 'unhandled error');
  return reply.status(we.status).send({ error: we.toJSON() });
}
