/**
 * Loaded (`-r`) into a Parley process the soak starts, beside `--expose-gc`: answers the soak's
 * IPC questions about its memory. `{ probe: 'memory' }` collects garbage first and answers
 * `process.memoryUsage()`, so the heap in use is what stays alive, not what awaits collection;
 * `{ probe: 'snapshot', path }` writes a heap snapshot there and answers when it is written.
 */
import { writeHeapSnapshot } from 'node:v8';

type Probe = { probe: 'memory' } | { probe: 'snapshot'; path: string };

if (process.send) {
  process.on('message', (message: Probe) => {
    if (message?.probe === 'memory') {
      (globalThis as { gc?: () => void }).gc?.();
      process.send!({ probe: 'memory', usage: process.memoryUsage() });
    } else if (message?.probe === 'snapshot') {
      const path = writeHeapSnapshot(message.path);
      process.send!({ probe: 'snapshot', path });
    }
  });
  // The IPC channel must not keep the process alive on shutdown.
  process.channel?.unref();
}
