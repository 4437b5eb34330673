import { Inject, Module, Optional, type DynamicModule, type OnApplicationBootstrap } from '@nestjs/common';
import { JOB_QUEUE, type JobQueue } from '@parley/platform';
import { MetricsService } from './metrics.service';

const QUEUE_NAMES = Symbol('parley.queue-depth.names');

class QueueDepthProbes implements OnApplicationBootstrap {
  constructor(
    @Inject(MetricsService) private readonly metrics: MetricsService,
    @Inject(QUEUE_NAMES) private readonly queues: readonly string[],
    @Optional() @Inject(JOB_QUEUE) private readonly jobs?: JobQueue,
  ) {}

  onApplicationBootstrap(): void {
    const jobs = this.jobs;
    if (!jobs) return;
    for (const queue of this.queues) this.metrics.registerQueueDepth(queue, () => jobs.depth(queue));
  }
}

/**
 * `queue_depth{queue}` for the named queues of the app's JOB_QUEUE, read at scrape time. Needs
 * the ObservabilityModule and QueueModule; the queue names come from the app, which knows them.
 */
@Module({})
export class QueueDepthModule {
  static forRoot(queues: readonly string[]): DynamicModule {
    return {
      module: QueueDepthModule,
      providers: [{ provide: QUEUE_NAMES, useValue: queues }, QueueDepthProbes],
    };
  }
}
