import { Inject, Injectable, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { JOB_QUEUE, type JobQueue } from '@parley/platform';
import { INGESTION_QUEUE, IngestionService, type IngestionJob } from './ingestion.service';

/** Ingestion jobs run side by side in one process; each embeds and writes in batches. */
const CONCURRENCY = 2;

/** Consumes the ingestion queue in this process (the worker app, or the all-in-one server). */
@Injectable()
export class IngestionWorker implements OnApplicationBootstrap {
  constructor(
    @Inject(JOB_QUEUE) private readonly jobs: JobQueue,
    @Inject(IngestionService) private readonly ingestion: IngestionService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.jobs.process<IngestionJob>(INGESTION_QUEUE, (job, context) => this.ingestion.run(job, context), {
      concurrency: CONCURRENCY,
    });
  }
}

/** Loaded by the apps that run jobs (runtimeModules with `worker: true`). Needs the global KnowledgeModule. */
@Module({ providers: [IngestionWorker] })
export class IngestionWorkerModule {}
