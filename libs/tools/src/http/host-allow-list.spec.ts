import { HostAllowList } from './host-allow-list';

const allows = (entries: string[], url: string) => new HostAllowList(entries).refusal(new URL(url)) === null;

describe('HostAllowList', () => {
  it('allows an exact host on any port when the entry names no port', () => {
    expect(allows(['api.example.com'], 'https://api.example.com/x')).toBe(true);
    expect(allows(['api.example.com'], 'http://api.example.com:8080/x')).toBe(true);
    expect(allows(['api.example.com'], 'https://other.example.com/x')).toBe(false);
  });

  it('allows only the named port when the entry has one, counting default ports', () => {
    expect(allows(['127.0.0.1:8080'], 'http://127.0.0.1:8080/')).toBe(true);
    expect(allows(['127.0.0.1:8080'], 'http://127.0.0.1:9090/')).toBe(false);
    expect(allows(['api.example.com:443'], 'https://api.example.com/')).toBe(true);
  });

  it('matches subdomains with *.domain but not the domain itself', () => {
    expect(allows(['*.example.com'], 'https://a.b.example.com/')).toBe(true);
    expect(allows(['*.example.com'], 'https://example.com/')).toBe(false);
    expect(allows(['*.example.com'], 'https://badexample.com/')).toBe(false);
  });

  it('allows nothing when the list is empty, and names the refused host', () => {
    expect(new HostAllowList([]).refusal(new URL('http://10.0.0.1/admin'))).toBe(
      'The host 10.0.0.1:80 is not in TOOL_HTTP_ALLOWED_HOSTS, so HTTP tools may not call it.',
    );
  });

  it('refuses schemes other than http and https', () => {
    expect(allows(['example.com'], 'file://example.com/etc/passwd')).toBe(false);
  });

  it('understands bracketed IPv6 entries', () => {
    expect(allows(['[::1]:8080'], 'http://[::1]:8080/')).toBe(true);
  });
});
