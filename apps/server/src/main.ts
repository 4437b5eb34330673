import 'reflect-metadata';
import { runDeployable } from '@parley/transport';
import { AppModule } from './app.module';

runDeployable({
  name: 'parley-server',
  kind: 'api',
  embeddedDatabase: true,
  firstRunKey: true,
  // The embedded database serves one connection: its projector always stays on the main thread.
  module: (config, { embedded }) => AppModule.forRoot(config, embedded ? { projectorThread: false } : {}),
});
