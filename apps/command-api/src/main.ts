import 'reflect-metadata';
import { runDeployable } from '@parley/transport';
import { CommandApiModule } from './command-api.module';

runDeployable({ name: 'parley-command-api', kind: 'api', module: (config) => CommandApiModule.forRoot(config) });
