import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

type Service = {
  ports?: (string | { published?: string | number; host_ip?: string })[];
  environment?: object;
  command?: string[];
};
type Compose = { services: Record<string, Service> };

const ROOT = join(__dirname, '..');
const load = (file: string) => parse(readFileSync(join(ROOT, file), 'utf8'), { merge: true }) as Compose;
const PARLEY_APPS = ['parley', 'command-api', 'query-api'];

/** A short-syntax port `[ip:]host:container`: the host address it binds, all interfaces when absent. */
function hostIp(port: Service['ports'] extends (infer P)[] | undefined ? P : never): string {
  if (typeof port !== 'string') return port.host_ip ?? '0.0.0.0';
  const parts = port.split(':');
  return parts.length === 3 ? parts[0] : '0.0.0.0';
}

describe('docker-compose.yml', () => {
  const compose = load('docker-compose.yml');
  const text = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');

  it('publishes on every interface only the ports of Parley itself', () => {
    const open = Object.entries(compose.services).flatMap(([name, service]) =>
      (service.ports ?? []).filter((p) => hostIp(p) !== '127.0.0.1').map(() => name),
    );
    expect(open.length).toBeGreaterThan(0);
    expect(open.filter((name) => !PARLEY_APPS.includes(name))).toEqual([]);
    for (const name of ['postgres', 'redis', 'nats', 'kurrentdb']) expect(compose.services[name].ports).toBeUndefined();
  });

  it('takes every password from the environment, required, and turns on Redis, NATS and Grafana authentication', () => {
    expect(text).not.toMatch(/parley:parley@|POSTGRES_PASSWORD: parley\b/);
    expect(text).not.toMatch(/:-[^}]*(password|secret)/i);
    const env = (name: string) => compose.services[name].environment as Record<string, string>;
    expect(env('postgres').POSTGRES_PASSWORD).toBe('${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}');
    expect(env('parley').REDIS_URL).toContain(':${REDIS_PASSWORD:?');
    expect(env('parley').NATS_PASSWORD).toMatch(/^\$\{PARLEY_NATS_PASSWORD:\?/);
    expect(env('nats').PARLEY_NATS_PASSWORD).toMatch(/^\$\{PARLEY_NATS_PASSWORD:\?/);
    expect(compose.services.redis.command).toEqual(expect.arrayContaining(['--requirepass']));
    expect(compose.services.nats.command).toEqual(expect.arrayContaining(['-c', '/etc/nats/nats-server.conf']));
    expect(text).toContain('./deploy/nats/nats-server.conf:/etc/nats/nats-server.conf:ro');
    expect(env('grafana').GF_AUTH_ANONYMOUS_ENABLED).toBe('false');
    expect(env('grafana').GF_SECURITY_ADMIN_PASSWORD).toMatch(/^\$\{GRAFANA_ADMIN_PASSWORD:\?/);
    for (const variable of text.matchAll(/\$\{(\w+):\?/g))
      expect(readFileSync(join(ROOT, '.env.example'), 'utf8')).toContain(`${variable[1]}=`);
  });

  it('publishes the backing services for development on 127.0.0.1 only (docker-compose.dev.yml)', () => {
    const dev = load('docker-compose.dev.yml');
    const ports = Object.values(dev.services).flatMap((s) => s.ports ?? []);
    expect(ports.length).toBeGreaterThan(0);
    expect(ports.map(hostIp)).toEqual(ports.map(() => '127.0.0.1'));
  });

  it('starts every Parley process with the V8 flags of the start scripts (package.json, Dockerfile)', () => {
    const scripts = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    const starts = Object.entries(scripts).filter(([name]) => name === 'start' || name.startsWith('start:'));
    expect(starts.length).toBeGreaterThanOrEqual(5);
    for (const [, line] of starts) expect(line).toMatch(/^node --max-semi-space-size=32 -r \.\/tools\/register\.js /);
    const apps = Object.values(compose.services)
      .map((service) => service.command ?? [])
      .filter((command) => command.some((arg) => /^apps\/.*main\.ts$/.test(arg)));
    expect(apps.length).toBe(4);
    for (const command of apps) expect(command.slice(0, 2)).toEqual(['node', '--max-semi-space-size=32']);
    expect(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')).toContain(
      'CMD ["node", "--max-semi-space-size=32", "-r", "./tools/register.js", "apps/server/src/main.ts"]',
    );
  });
});
