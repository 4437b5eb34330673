/**
 * What the soak's model does and the catalog it runs: the demo script (an order looked up with
 * the in-process tool, a ticket that asks a question first, an echo for anything else), plus an
 * echo through server-everything (MCP, streamable HTTP), a cancellation whose tool needs an
 * approval, and a reply that stalls after its first chunks (a turn still running when it is
 * killed).
 */
import { demoScript } from '../../libs/testing/src';
import type { SimRule } from '../../libs/testing/src/simulator/simulator.types';
import { testCatalog } from '../../test/support/test-catalog';

export const MCP_CLIENT = 'everything';
const MCP_ECHO = `${MCP_CLIENT}__echo`;

export const soakRules: SimRule[] = [
  { name: 'after-echo', when: { toolResult: { name: MCP_ECHO } }, reply: { text: 'I echoed it through MCP.' } },
  { name: 'after-cancel', when: { toolResult: { name: 'CANCEL_ORDER' } }, reply: { text: 'Done with the cancel.' } },
  ...demoScript.slice(0, 2),
  {
    name: 'mcp-echo',
    when: { lastUserMessage: /^echo/i, noToolResult: true },
    reply: { toolCalls: [{ name: MCP_ECHO, arguments: { message: 'soak' } }] },
  },
  {
    name: 'cancel-order',
    when: { lastUserMessage: /^cancel/i, noToolResult: true },
    reply: { toolCalls: [{ name: 'CANCEL_ORDER', arguments: { orderId: 'A-1001' } }] },
  },
  // Stalls with the socket open: the turn runs until it is killed (or LLM_CALL_TIMEOUT_MS).
  {
    name: 'stall',
    when: { lastUserMessage: /^hold on/i },
    reply: { text: 'Let me think about it', stallAfterChunks: 2 },
  },
  ...demoScript.slice(2),
];

/** The test catalog with server-everything as an MCP client and an action that uses it. */
export function soakCatalog(simulatorUrl: string, mcpPort: number) {
  const base = testCatalog(simulatorUrl);
  return {
    ...base,
    mcpClients: [
      {
        name: MCP_CLIENT,
        description: 'server-everything over streamable HTTP',
        mcpTransportType: 'SH',
        mcpConnectionUrl: `http://127.0.0.1:${mcpPort}/mcp`,
      },
    ],
    actions: [
      ...base.actions,
      {
        code: 'MCP',
        description: 'Echoes through server-everything',
        llmModel: 'SIM-CHAT',
        llmConfiguration: 'TEST',
        llmMemoryStrategy: 'FULL',
        mcpClients: [MCP_CLIENT],
      },
    ],
  };
}
