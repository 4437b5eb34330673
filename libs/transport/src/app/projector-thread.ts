import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { onLocalAppend } from '@parley/event-store';
import { MetricsService } from '@parley/observability';
import { once } from 'node:events';
import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { FromProjector, ToProjector } from './projector-thread.messages';

/** After an unexpected exit, the thread starts again after this long. */
const RESTART_AFTER_MS = 1000;
/** How long a stopping thread may take before it is terminated. */
const STOP_GRACE_MS = 10_000;

/**
 * The all-in-one server's projector on a worker thread (PROJECTOR_THREAD, off by default): the
 * read-model projections and the integration relay run there, as `apps/projector` runs them, so
 * their batches never run on the main thread between a turn's steps. The thread keeps
 * every guarantee of the projector process (one checkpointed subscription, its advisory lock);
 * it is told of this thread's appends at once, reports its projection lag to this process's
 * metrics, and starts again if it ever exits unasked.
 */
@Injectable()
export class ProjectorThread implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('ProjectorThread');
  private worker: Worker | null = null;
  private stopping = false;
  private restart: NodeJS.Timeout | null = null;
  private appendNoticePending = false;
  private stopForwarding: (() => void) | null = null;

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Optional() @Inject(MetricsService) private readonly metrics?: MetricsService,
  ) {}

  /** True while the thread runs its projections. */
  get running(): boolean {
    return this.worker !== null;
  }

  async onApplicationBootstrap(): Promise<void> {
    // One message per turn of the event loop, however many appends it made.
    this.stopForwarding = onLocalAppend(() => {
      if (this.appendNoticePending) return;
      this.appendNoticePending = true;
      queueMicrotask(() => {
        this.appendNoticePending = false;
        this.send({ type: 'append' });
      });
    });
    await this.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    this.stopForwarding?.();
    if (this.restart) clearTimeout(this.restart);
    const worker = this.worker;
    if (!worker) return;
    const exited = once(worker, 'exit');
    const stopped = new Promise<void>((resolve) =>
      worker.on('message', (message: FromProjector) => message.type === 'stopped' && resolve()),
    );
    worker.postMessage({ type: 'stop' } satisfies ToProjector);
    const grace = new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref());
    await Promise.race([stopped, exited, grace]);
    await worker.terminate();
    this.worker = null;
  }

  private send(message: ToProjector): void {
    this.worker?.postMessage(message);
  }

  /** Starts the thread; resolves once its projections run, rejects if it fails to start. */
  private start(): Promise<void> {
    const worker = new Worker(ENTRY, {
      workerData: { config: this.config },
      // Only the hook the sources need: a process-wide flag of this process's would be refused.
      execArgv: ENTRY.endsWith('.ts') ? ['-r', REGISTER] : [],
      name: 'parley-projector',
    });
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      worker.on('message', (message: FromProjector) => {
        if (message.type === 'ready') {
          ready = true;
          this.worker = worker;
          resolve();
        } else if (message.type === 'failed') {
          this.logger.error(`the projector thread failed to start: ${message.message}`);
        } else if (message.type === 'lag') {
          for (const [projection, ms] of Object.entries(message.values))
            if (ms !== null) this.metrics?.setProjectionLag(projection, ms);
        }
      });
      worker.on('error', (err) => this.logger.error(`the projector thread failed: ${err.stack ?? String(err)}`));
      worker.on('exit', (code) => {
        if (this.worker === worker) this.worker = null;
        if (!ready) return reject(new Error(`the projector thread exited with code ${code} before it was ready`));
        if (this.stopping) return;
        this.logger.error(`the projector thread exited (code ${code}); starting it again`);
        this.restart = setTimeout(() => {
          this.restart = null;
          if (!this.stopping) this.start().catch((err: unknown) => this.logger.error(String(err)));
        }, RESTART_AFTER_MS);
      });
    });
  }
}

/** The thread's script beside this file: TypeScript when the sources run directly (`npm start`, tests). */
const ENTRY = join(__dirname, `projector-thread.entry${extname(__filename)}`);
/** The hook that runs TypeScript sources, for a thread started where they run directly. */
const REGISTER = join(__dirname, '../../../../tools/register.js');
