import 'reflect-metadata';
import { runDeployable } from '@parley/transport';
import { ProjectorModule } from './projector.module';

runDeployable({ name: 'parley-projector', kind: 'background', module: (config) => ProjectorModule.forRoot(config) });
