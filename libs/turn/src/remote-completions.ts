import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { ConversationRepository, TurnScheduler } from '@parley/conversation';
import { availableTools, decide, type ConversationEvent } from '@parley/domain';
import { NATS_LINK, type NatsConnection, type NatsLink } from '@parley/platform';
import {
  conversationOfReply,
  RemoteToolInvoker,
  replyStreamName,
  skillCompletionSchema,
  TOOL_METRICS,
  type SkillCompletionEvent,
  type ToolMetrics,
} from '@parley/tools';
import { AckPolicy, nanos, type ConsumerMessages, type JsMsg } from 'nats';

/** The durable consumer of completions: one per prefix, shared by Parley's processes. */
export const COMPLETIONS_CONSUMER = 'parley-tool-replies';
/** A completion that could not be recorded (the store away, a race with the turn) comes back after this. */
const RETRY_AFTER_MS = 1_000;
/**
 * A completion can arrive while the turn that published the call is still recording it: it is
 * delivered again this often, this many times, before it counts as one for no waiting call.
 */
const EARLY_RETRY_MS = 25;
const EARLY_REDELIVERIES = 200;
/** A completion for a paused conversation is offered again this often until it is resumed. */
const PAUSED_RETRY_MS = 5_000;

/**
 * Remote tool completions (SkillCompletionEvent) from JetStream: each one records the waiting
 * call's outcome and resumes the turn. The stream and its durable consumer outlive Parley, so a
 * completion published while no Parley runs is delivered when one starts. Completions for calls
 * not waiting (answered already, past their deadline, unknown) and malformed ones are
 * acknowledged, logged and change nothing.
 */
@Injectable()
export class RemoteCompletions implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('RemoteCompletions');
  private messages: ConsumerMessages | null = null;
  private loop: Promise<void> | null = null;
  private cancel: (() => void) | null = null;
  private stopped = false;

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(NATS_LINK) private readonly nats: NatsLink,
    @Inject(ConversationRepository) private readonly repository: ConversationRepository,
    @Inject(TurnScheduler) private readonly scheduler: TurnScheduler,
    @Inject(RemoteToolInvoker) private readonly invoker: RemoteToolInvoker,
    @Optional() @Inject(TOOL_METRICS) private readonly metrics: ToolMetrics | null = null,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    let starting: Promise<void> | null = null;
    this.cancel = this.nats.onConnected(
      (nats) =>
        (starting = this.start(nats).catch((err: unknown) =>
          this.logger.error(`remote tool completions are not consumed: ${String(err)}`),
        )),
    );
    await starting;
  }

  private async start(nats: NatsConnection): Promise<void> {
    const { prefix } = this.config;
    const stream = replyStreamName(prefix);
    const jsm = await nats.jetstreamManager();
    if (!(await jsm.streams.info(stream).catch(() => null)))
      await jsm.streams.add({ name: stream, subjects: [`${prefix}.tool-replies.>`] });
    if (!(await jsm.consumers.info(stream, COMPLETIONS_CONSUMER).catch(() => null)))
      await jsm.consumers.add(stream, {
        durable_name: COMPLETIONS_CONSUMER,
        ack_policy: AckPolicy.Explicit,
        ack_wait: nanos(30_000),
      });
    if (this.stopped) return;
    const consumer = await nats.jetstream().consumers.get(stream, COMPLETIONS_CONSUMER);
    const messages = await consumer.consume({ max_messages: 16 });
    this.messages = messages;
    this.loop = (async () => {
      for await (const m of messages) await this.handle(m);
    })();
  }

  /** Records one completion; acknowledged once it is recorded or known to change nothing. */
  async handle(m: JsMsg): Promise<void> {
    const conversationId = conversationOfReply(this.config.prefix, m.subject);
    const completion = conversationId ? parseCompletion(m.data) : null;
    if (!conversationId || !completion) {
      this.logger.warn(`ignored a malformed remote tool completion on ${m.subject}`);
      return m.ack();
    }
    try {
      const loaded = await this.repository.load(conversationId);
      const result = this.resultOf(completion, loaded.state);
      const meta = { now: new Date().toISOString(), actor: 'remote-tool' };
      const events = decide(
        { type: 'CompleteRemoteTool', data: { correlationId: completion.correlationId, result }, meta },
        loaded.state,
      );
      if (events.length === 0 && loaded.state.status === 'RU' && m.info.redeliveryCount < EARLY_REDELIVERIES) {
        // Published before the turn recorded the call (a fast service): asked again once it has.
        return m.nak(EARLY_RETRY_MS);
      }
      if (events.length === 0 && loaded.state.status === 'PA') {
        // Paused while it waited: the completion is kept until the conversation is resumed.
        return m.nak(PAUSED_RETRY_MS);
      }
      if (events.length === 0) {
        this.logger.warn(
          `ignored remote tool completion ${completion.correlationId} of ${conversationId}: no call of it is waiting (a duplicate, a late or an unknown one)`,
        );
        return m.ack();
      }
      const appended = await this.repository.append(conversationId, loaded, events, { actor: meta.actor });
      m.ack();
      countRemoteOutcomes(this.metrics, events);
      await this.scheduler
        .afterAppend(conversationId, events, appended.revision)
        .catch((err: unknown) =>
          this.logger.warn(`the resumed turn of ${conversationId} is left to the dispatcher: ${String(err)}`),
        );
    } catch (err) {
      this.logger.warn(`remote tool completion of ${conversationId} not recorded yet: ${String(err)}`);
      m.nak(RETRY_AFTER_MS);
    }
  }

  /**
   * The completion as the result of the call it answers: the service's error, or its result
   * checked against the tool's output schema and cut to the conversation's output limit.
   */
  private resultOf(c: SkillCompletionEvent, state: Awaited<ReturnType<ConversationRepository['load']>>['state']) {
    if (state.status === 'none') return this.invoker.settle(null, c, 0);
    const call = state.turn?.toolCalls.find((t) => t.remote?.correlationId === c.correlationId);
    const def = call ? (availableTools(state).find((t) => t.name === call.name) ?? null) : null;
    return this.invoker.settle(def, c, state.snapshot.limits.maxToolOutputBytes);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.cancel?.();
    await this.messages?.close();
    await this.loop?.catch(() => undefined);
  }
}

function parseCompletion(data: Uint8Array): SkillCompletionEvent | null {
  try {
    const parsed = skillCompletionSchema.safeParse(JSON.parse(Buffer.from(data).toString('utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Counts the remote calls `events` settle in llm_tool_call_count (kind `remote`). */
export function countRemoteOutcomes(metrics: ToolMetrics | null, events: readonly ConversationEvent[]): void {
  for (const e of events) {
    if (e.type === 'ToolCallCompleted') metrics?.toolCall('remote', 'ok', e.data.durationMs);
    if (e.type === 'ToolCallFailed') metrics?.toolCall('remote', e.data.code, e.data.durationMs);
  }
}
