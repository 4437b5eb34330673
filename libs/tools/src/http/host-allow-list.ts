interface Entry {
  host: string;
  wildcard: boolean;
  port: string | null;
}

const DEFAULT_PORT: Record<string, string> = { 'http:': '80', 'https:': '443' };

/**
 * TOOL_HTTP_ALLOWED_HOSTS: the only hosts HTTP tools may call, so a tool config cannot reach
 * arbitrary internal addresses. Entries: `api.example.com`, `*.example.com` (subdomains only),
 * either with an optional `:port`. An empty list allows nothing.
 */
export class HostAllowList {
  private readonly entries: Entry[];

  /** `setting` and `callers` name the list and who it guards in a refusal (also providers' and MCP clients' lists). */
  constructor(
    entries: readonly string[],
    private readonly setting = 'TOOL_HTTP_ALLOWED_HOSTS',
    private readonly callers = 'HTTP tools',
  ) {
    this.entries = entries.map(parseEntry);
  }

  /** Null when the URL may be called, else the reason, naming the host. */
  refusal(url: URL): string | null {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return `Only http and https URLs may be called (got ${url.protocol.replace(/:$/, '')}).`;
    }
    const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
    const port = url.port || DEFAULT_PORT[url.protocol];
    const allowed = this.entries.some(
      (e) => (e.port === null || e.port === port) && (e.wildcard ? host.endsWith(`.${e.host}`) : host === e.host),
    );
    return allowed ? null : `The host ${host}:${port} is not in ${this.setting}, so ${this.callers} may not call it.`;
  }
}

function parseEntry(raw: string): Entry {
  let value = raw.trim().toLowerCase();
  const wildcard = value.startsWith('*.');
  if (wildcard) value = value.slice(2);
  // IPv6 entries are written in brackets: [::1]:8080.
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(value);
  const host = (match?.[1] ?? value).replace(/^\[|\]$/g, '');
  return { host, wildcard, port: match?.[2] ?? null };
}
