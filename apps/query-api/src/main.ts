import 'reflect-metadata';
import { runDeployable } from '@parley/transport';
import { QueryApiModule } from './query-api.module';

runDeployable({ name: 'parley-query-api', kind: 'api', module: (config) => QueryApiModule.forRoot(config) });
