import type { Config } from '@parley/config';
import { DomainError, type FieldProblem } from '@parley/core';
import { HostAllowList } from '@parley/tools';
import type { Row } from '../model/entity-schemas';
import type { Secret } from '../secrets/secret-specs';
import { originOf } from '../secrets/tool-secrets';

/**
 * Where the catalog may send credentials and what it may run (docs/security.md): providers'
 * and MCP clients' URLs against their host allow-lists, stdio MCP commands against
 * MCP_STDIO_COMMANDS, and a stored secret never follows a URL to another origin unless given
 * again; a provider a client owns, against SELF_SERVICE_PROVIDER_ALLOWED_HOSTS as well. Checked
 * when the catalog changes and again at call or spawn time.
 */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

export class CatalogDestinations {
  private readonly providerHosts: HostAllowList;
  private readonly selfServiceProviderHosts: HostAllowList;
  private readonly mcpHosts: HostAllowList;
  private readonly commands: string[][];

  constructor(config: Config['catalog']) {
    this.providerHosts = new HostAllowList(config.providerAllowedHosts, 'LLM_PROVIDER_ALLOWED_HOSTS', 'providers');
    this.selfServiceProviderHosts = new HostAllowList(
      config.selfServiceProviderAllowedHosts,
      'SELF_SERVICE_PROVIDER_ALLOWED_HOSTS',
      "clients' own providers",
    );
    this.mcpHosts = new HostAllowList(config.mcpHttpAllowedHosts, 'MCP_HTTP_ALLOWED_HOSTS', 'MCP clients');
    this.commands = config.mcpStdioCommands.map((line) => line.split(/\s+/).filter(Boolean));
  }

  /** Null when a provider may call `baseUrl` (absent: OpenAI's), else why not. */
  providerRefusal(baseUrl: unknown): string | null {
    return urlRefusal(this.providerHosts, typeof baseUrl === 'string' ? baseUrl : OPENAI_BASE_URL);
  }

  /**
   * Null when a provider a client owns (an owner, not instance-wide) may call `baseUrl`: both
   * LLM_PROVIDER_ALLOWED_HOSTS and SELF_SERVICE_PROVIDER_ALLOWED_HOSTS allow it.
   */
  ownedProviderRefusal(baseUrl: unknown): string | null {
    const url = typeof baseUrl === 'string' ? baseUrl : OPENAI_BASE_URL;
    return urlRefusal(this.providerHosts, url) ?? urlRefusal(this.selfServiceProviderHosts, url);
  }

  /** The refusal that applies to a stored provider row: the narrower one when a client owns it. */
  providerRowRefusal(record: Row): string | null {
    return isClientOwned(record) ? this.ownedProviderRefusal(record.baseUrl) : this.providerRefusal(record.baseUrl);
  }

  mcpUrlRefusal(url: unknown): string | null {
    return urlRefusal(this.mcpHosts, String(url));
  }

  /** Null when `command args…` begins with an entry of MCP_STDIO_COMMANDS word for word. */
  stdioRefusal(command: unknown, args: unknown): string | null {
    const line = [String(command), ...(Array.isArray(args) ? args.map(String) : [])];
    const allowed = this.commands.some(
      (entry) => entry.length <= line.length && entry.every((word, i) => word === line[i]),
    );
    return allowed ? null : `The command '${line.join(' ')}' is not allowed by MCP_STDIO_COMMANDS.`;
  }

  /** The catalog-time checks of a provider or MCP client item. */
  problems(kind: string, path: string, values: Row, stored: { record: Row; secret: Secret | null } | null) {
    const problems: FieldProblem[] = [];
    const add = (field: string, message: string | null) =>
      message && problems.push({ path: `${path}.${field}`, message });
    if (kind === 'providers') {
      add('baseUrl', this.providerRowRefusal(values));
      const from = stored ? ((stored.record.baseUrl as string | null) ?? OPENAI_BASE_URL) : null;
      for (const name of movedSecrets(from, (values.baseUrl as string | null) ?? OPENAI_BASE_URL, stored, values))
        add(name, movedMessage(from, values.baseUrl ?? OPENAI_BASE_URL));
    }
    if (kind === 'mcpClients') {
      if (values.mcpTransportType === 'ST') add('command', this.stdioRefusal(values.command, values.args));
      else if (values.mcpConnectionUrl) add('mcpConnectionUrl', this.mcpUrlRefusal(values.mcpConnectionUrl));
      const from = stored ? ((stored.record.mcpConnectionUrl as string | null) ?? null) : null;
      const to = (values.mcpConnectionUrl as string | null) ?? null;
      for (const name of movedSecrets(from, to, stored, values).filter((n) => n === 'headers'))
        add(name, movedMessage(from, to));
    }
    return problems;
  }
}

/** A provider or model with an owner that is not shared with everyone: a client's own. */
export const isClientOwned = (record: Row): boolean =>
  typeof record.owner === 'string' && record.owner !== '' && record.instanceWide !== true;

/** The stored secrets a request leaves out although the destination's origin changed. */
function movedSecrets(
  from: string | null,
  to: string | null,
  stored: { secret: Secret | null } | null,
  values: Row,
): string[] {
  if (!stored?.secret || originOf(from) === originOf(to)) return [];
  return Object.keys(stored.secret).filter((name) => values[name] === undefined);
}

const movedMessage = (from: unknown, to: unknown) =>
  `the URL's origin changed (${originOf(from) ?? 'none'} → ${originOf(to) ?? 'none'}): give this secret again, or null to drop it`;

function urlRefusal(list: HostAllowList, text: string): string | null {
  try {
    return list.refusal(new URL(text));
  } catch {
    return null; // not a URL: reported by the URL check
  }
}

/** FORBIDDEN at call or spawn time, for a catalog written before the lists were narrowed. */
export function refused(message: string | null, details: Record<string, unknown>): void {
  if (message) throw new DomainError('FORBIDDEN', message, details);
}
