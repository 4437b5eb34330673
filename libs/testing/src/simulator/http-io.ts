import type { IncomingMessage, ServerResponse } from 'node:http';

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  404: 'not_found_error',
  429: 'rate_limit_exceeded',
  503: 'overloaded_error',
};

export function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  code?: string,
): void {
  const type = ERROR_TYPES[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
  sendJson(res, status, { error: { message, type, param: null, code: code ?? type } }, headers);
}
