import type { DynamicModule } from '@nestjs/common';
import type { Config } from '@parley/config';
import { runtimeModules } from '@parley/turn';

/**
 * The worker: turn and timer jobs from the queue. Run as an application context, so the
 * routes of the modules it needs (catalog, keys) are never mounted; see runDeployable.
 */
export class WorkerModule {
  static forRoot(config: Config): DynamicModule {
    return {
      module: WorkerModule,
      imports: [...runtimeModules(config, { worker: true })],
    };
  }
}
