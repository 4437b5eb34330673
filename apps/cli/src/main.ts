import 'reflect-metadata';
import { Command } from 'commander';
import { registerKeyCommands } from '@parley/auth';
import { registerCatalogCommands } from '@parley/catalog';
import { registerChatCommand } from '@parley/conversation';
import { registerDocsCommands } from '@parley/knowledge';
import { registerReadCommands } from '@parley/read-models';
import { registerMcpCommand } from '@parley/transport';

/**
 * `parley`: the command line. Each library registers its own commands; they run the same
 * handlers as the APIs.
 */
async function main(argv: string[]): Promise<void> {
  const program = new Command('parley').description('Parley: LLM conversations as event streams').showHelpAfterError();
  registerKeyCommands(program);
  registerCatalogCommands(program);
  registerReadCommands(program);
  registerChatCommand(program);
  registerDocsCommands(program);
  registerMcpCommand(program);
  await program.parseAsync(argv);
}

main(process.argv).catch((err: unknown) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
});
