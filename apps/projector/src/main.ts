import 'reflect-metadata';
import { ProjectorModule, runDeployable } from '@parley/transport';

runDeployable({ name: 'parley-projector', kind: 'background', module: (config) => ProjectorModule.forRoot(config) });
