import { Controller, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import { Authenticator, Public } from '@parley/auth';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { JSON_RPC_PATH, JsonRpcDispatcher, parseErrorResponse, type JsonRpcReply } from './json-rpc';

/**
 * `POST /rpc`: JSON-RPC 2.0 with the bearer credential of every route. It is marked public only
 * so that AuthGuard leaves the per-caller limit to each call of a batch: the credential is
 * checked here, before the body is looked at. A message of notifications only answers 204.
 */
@Controller()
export class JsonRpcController {
  constructor(
    @Inject(JsonRpcDispatcher) private readonly dispatcher: JsonRpcDispatcher,
    @Inject(Authenticator) private readonly authenticator: Authenticator,
  ) {}

  @Post(JSON_RPC_PATH.slice(1))
  @Public()
  @HttpCode(200)
  async rpc(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<JsonRpcReply> {
    const principal = await this.authenticator.authenticate(request.headers.authorization);
    const message = messageOf(request.body);
    if (message === undefined) {
      void reply.status(400);
      return parseErrorResponse();
    }
    const answer = await this.dispatcher.dispatch(message.value, {
      principal,
      authorization: request.headers.authorization,
    });
    if (answer === null) void reply.status(204);
    return answer;
  }
}

/**
 * The JSON-RPC message of a body: parsed already (application/json), or text sent under another
 * type (text/plain) read as JSON here. Undefined when there is no JSON: no body, or text that is not.
 */
function messageOf(body: unknown): { value: unknown } | undefined {
  if (body === undefined) return undefined;
  if (typeof body !== 'string') return { value: body };
  try {
    return { value: JSON.parse(body) };
  } catch {
    return undefined;
  }
}
