import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { HostAllowList } from './host-allow-list';

/** Loopback, private, link-local (cloud metadata), carrier-grade NAT, multicast and reserved ranges. */
const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 127],
  // NAT64: a way to write an IPv4 address past an IPv4 check (IPv4-mapped ones are unwrapped below).
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv6');

const LOOKUP_TIMEOUT_MS = 2_000;

/** Whether an address is one a model server must not be sent to fetch from (IPv4-mapped IPv6 included). */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (mapped) {
    const [, dotted, high, low] = mapped;
    const v4 = dotted ?? [high, low].flatMap((h) => [parseInt(h, 16) >> 8, parseInt(h, 16) & 255]).join('.');
    return PRIVATE.check(v4, 'ipv4');
  }
  const family = isIP(address);
  if (family === 0) return true;
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Where attachment URLs may point. A model server (often self-hosted, inside Parley's network)
 * fetches them, so only `https:` and inline `data:` URLs are taken, and an https host that is, or
 * resolves to, a private, loopback or link-local address is refused unless
 * ATTACHMENT_ALLOWED_HOSTS lists it (the same entry syntax as TOOL_HTTP_ALLOWED_HOSTS).
 */
export class AttachmentUrlPolicy {
  private readonly allowed: HostAllowList;

  constructor(allowedHosts: readonly string[]) {
    this.allowed = new HostAllowList(allowedHosts);
  }

  /** Null when the URL may be sent to the model, else the reason. */
  async refusal(raw: string): Promise<string | null> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return 'expected an absolute URL';
    }
    if (url.protocol === 'data:') return null;
    if (url.protocol !== 'https:') return `only https: and data: URLs are accepted (got ${url.protocol})`;
    if (url.username || url.password) return 'a URL with credentials is not accepted';
    if (this.allowed.refusal(url) === null) return null;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const addresses = isIP(host) ? [host] : await resolve(host);
    if (addresses === null) return `the host ${host} could not be resolved`;
    const inside = addresses.find(isPrivateAddress);
    return inside === undefined
      ? null
      : `the host ${host} is a private, loopback or link-local address (${inside}); list it in ATTACHMENT_ALLOWED_HOSTS to allow it`;
  }
}

async function resolve(host: string): Promise<string[] | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((r) => (timer = setTimeout(() => r(null), LOOKUP_TIMEOUT_MS)));
  try {
    const found = lookup(host, { all: true, verbatim: true }).then(
      (list) => list.map((a) => a.address),
      () => null,
    );
    return await Promise.race([found, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
