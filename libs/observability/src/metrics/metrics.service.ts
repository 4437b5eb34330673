import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const MS_BUCKETS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000];

/** Callers pass bounded values only (route patterns, subject patterns, codes): never ids. */
export type LlmOutcome = 'ok' | 'error' | 'timeout' | 'limit';

/**
 * Every Prometheus metric of Parley, in one registry per process: seed 004's llm_* metrics,
 * HTTP and NATS requests, event-store appends, projection lag and queue depth.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  private readonly llmRequests = this.counter('llm_requests_total', 'Model calls', ['provider', 'model', 'outcome']);
  private readonly llmLatency = this.histogram('llm_latency_ms', 'Model call latency', ['provider', 'model']);
  private readonly toolCalls = this.counter('llm_tool_call_count', 'Tool calls run for the model', ['kind', 'outcome']);
  private readonly tokens = this.counter('llm_token_usage', 'Tokens used', ['model', 'direction']);
  private readonly mcpErrors = this.counter('llm_mcp_errors_total', 'MCP client errors', ['client', 'kind']);
  private readonly budgetRefusals = this.counter('budget_refusals_total', 'Model calls refused by a spend budget', [
    'scope',
    'period',
  ]);
  private readonly httpRequests = this.counter('http_requests_total', 'HTTP requests', ['method', 'route', 'status']);
  private readonly httpDuration = this.histogram('http_request_duration_ms', 'HTTP request duration', [
    'method',
    'route',
    'status',
  ]);
  private readonly natsRequests = this.counter('nats_requests_total', 'NATS requests', ['subject', 'outcome']);
  private readonly natsDuration = this.histogram('nats_request_duration_ms', 'NATS request duration', [
    'subject',
    'outcome',
  ]);
  private readonly appendLatency = this.histogram('event_store_append_ms', 'Event-store append latency', []);
  private readonly projectionLag = new Gauge({
    name: 'projection_lag_ms',
    help: 'Age of the newest event a projection has not yet applied',
    labelNames: ['projection'],
    registers: [this.registry],
  });
  private readonly queueProbes = new Map<string, () => Promise<number> | number>();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    const probes = this.queueProbes;
    new Gauge({
      name: 'queue_depth',
      help: 'Jobs waiting in a queue',
      labelNames: ['queue'],
      registers: [this.registry],
      async collect() {
        for (const [queue, probe] of probes) {
          const depth = await Promise.resolve()
            .then(probe)
            .catch(() => Number.NaN);
          this.set({ queue }, depth);
        }
      },
    });
  }

  recordLlmRequest(labels: { provider: string; model: string; outcome: LlmOutcome }, latencyMs: number): void {
    this.llmRequests.inc(labels);
    this.llmLatency.observe({ provider: labels.provider, model: labels.model }, latencyMs);
  }

  recordToolCall(labels: { kind: string; outcome: 'ok' | 'error' | 'rejected' | 'timeout' }): void {
    this.toolCalls.inc(labels);
  }

  recordTokenUsage(model: string, usage: { input: number; output: number }): void {
    if (usage.input > 0) this.tokens.inc({ model, direction: 'input' }, usage.input);
    if (usage.output > 0) this.tokens.inc({ model, direction: 'output' }, usage.output);
  }

  /** Tokens an embedding model read: `llm_token_usage{direction="embedding"}`. */
  recordEmbeddingUsage(model: string, tokens: number): void {
    if (tokens > 0) this.tokens.inc({ model, direction: 'embedding' }, tokens);
  }

  /** A model call a spend budget refused (BUDGET_EXCEEDED): which kind of budget. */
  recordBudgetRefusal(labels: { scope: string; period: string }): void {
    this.budgetRefusals.inc(labels);
  }

  recordMcpError(labels: { client: string; kind: string }): void {
    this.mcpErrors.inc(labels);
  }

  /** `route` is the route pattern (`/api/v1/conversations/:id`), never the raw URL. */
  recordHttpRequest(labels: { method: string; route: string; status: number }, durationMs: number): void {
    const l = { ...labels, status: String(labels.status) };
    this.httpRequests.inc(l);
    this.httpDuration.observe(l, durationMs);
  }

  /** `subject` is the subject pattern (`parley.cmd.sendMessage`), without conversation ids. */
  recordNatsRequest(labels: { subject: string; outcome: string }, durationMs: number): void {
    this.natsRequests.inc(labels);
    this.natsDuration.observe(labels, durationMs);
  }

  recordEventStoreAppend(durationMs: number): void {
    this.appendLatency.observe(durationMs);
  }

  setProjectionLag(projection: string, lagMs: number): void {
    this.projectionLag.set({ projection }, lagMs);
  }

  /** Depth is read at scrape time; a probe that fails reports NaN rather than failing the scrape. */
  registerQueueDepth(queue: string, probe: () => Promise<number> | number): void {
    this.queueProbes.set(queue, probe);
  }

  /** The current value of each series of a gauge (`projection_lag_ms`, `queue_depth`), by its one label. */
  async gaugeValues(name: 'projection_lag_ms' | 'queue_depth'): Promise<Record<string, number | null>> {
    const metric = this.registry.getSingleMetric(name);
    if (!metric) return {};
    const { values } = await metric.get();
    return Object.fromEntries(
      values.map((v) => [String(Object.values(v.labels)[0]), Number.isFinite(v.value) ? v.value : null]),
    );
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private counter<L extends string>(name: string, help: string, labelNames: L[]) {
    return new Counter<L>({ name, help, labelNames, registers: [this.registry] });
  }

  private histogram<L extends string>(name: string, help: string, labelNames: L[]) {
    return new Histogram<L>({ name, help, labelNames, buckets: MS_BUCKETS, registers: [this.registry] });
  }
}
