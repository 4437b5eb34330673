import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MetricsService } from './metrics.service';

const DASHBOARD = join(__dirname, '../../../../deploy/grafana/parley-dashboard.json');

describe('the shipped Grafana dashboard', () => {
  it('has a panel for every Parley metric', async () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: { targets: { expr: string }[] }[] };
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)).join('\n');
    const own = (await new MetricsService().registry.getMetricsAsJSON())
      .map((m) => m.name)
      .filter((name) => !/^(process|nodejs)_/.test(name));

    expect(own.length).toBeGreaterThanOrEqual(12);
    expect(own.filter((name) => !exprs.includes(name))).toEqual([]);
  });
});
