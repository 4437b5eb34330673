import 'reflect-metadata';
import { runDeployable } from '@parley/transport';
import { AppModule } from './app.module';

runDeployable({
  name: 'parley-server',
  kind: 'api',
  embeddedDatabase: true,
  firstRunKey: true,
  module: (config) => AppModule.forRoot(config),
});
