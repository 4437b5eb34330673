import 'reflect-metadata';
import { runDeployable } from '@parley/transport';
import { WorkerModule } from './worker.module';

runDeployable({ name: 'parley-worker', kind: 'background', module: (config) => WorkerModule.forRoot(config) });
