import helmet from 'helmet';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { securityHeaders } from './security-headers';

describe('securityHeaders: helmet headers computed once', () => {
  const options = { contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } };

  it('gives what helmet sets on a response, header for header', () => {
    const set = new Map<string, string>();
    const res = {
      setHeader: (name: string, value: string) => set.set(name.toLowerCase(), value),
      removeHeader: (name: string) => set.delete(name.toLowerCase()),
    };
    helmet(options)({} as IncomingMessage, res as unknown as ServerResponse, () => undefined);
    expect(securityHeaders(options)).toEqual(Object.fromEntries(set));
    expect(securityHeaders(options)).toMatchObject({
      'x-frame-options': 'SAMEORIGIN',
      'x-content-type-options': 'nosniff',
      'strict-transport-security': expect.stringContaining('max-age='),
    });
    expect(securityHeaders(options)['content-security-policy']).not.toContain('upgrade-insecure-requests');
  });

  it('refuses options helmet refuses', () => {
    expect(() => securityHeaders({ contentSecurityPolicy: { directives: { scriptSrc: ['self'] } } })).toThrow(/quoted/);
  });
});
