/** A catalog bundle for end-to-end tests: one provider pointing at the simulator, and actions for each path. */
export function testCatalog(simulatorUrl: string, overrides: { retryCount?: number; maxToolRounds?: number } = {}) {
  const config = {
    code: 'TEST',
    description: 'Test configuration',
    temperature: 0,
    tokenSizeMax: 256,
    llmRetryCount: overrides.retryCount ?? 3,
    llmRetryDelay: 5,
    maxToolRounds: overrides.maxToolRounds ?? 4,
  };
  const action = (code: string, extra: Record<string, unknown> = {}) => ({
    code,
    description: `Test action ${code}`,
    llmModel: 'SIM-CHAT',
    llmConfiguration: 'TEST',
    llmMemoryStrategy: 'FULL',
    llmActionPrompt: 'Answer briefly.',
    ...extra,
  });
  return {
    providers: [
      {
        code: 'SIM',
        description: 'Simulator',
        providerType: 'openai-compatible',
        baseUrl: simulatorUrl,
        apiKey: 'sk-test-secret-4242',
        instanceWide: true,
      },
    ],
    models: [
      {
        code: 'SIM-CHAT',
        description: 'Chat model',
        llmModelName: 'sim-chat',
        llmProvider: 'SIM',
        modelType: 'inference',
        llmInputTokenPrice: 0.000001,
        llmOutputTokenPrice: 0.000002,
        capabilities: ['FC', 'SR', 'JM'],
        instanceWide: true,
      },
    ],
    configurations: [config],
    memoryStrategyTypes: [{ code: 'FULL', description: 'Full' }],
    memoryStrategies: [{ code: 'FULL', description: 'Keep all', llmMemoryStrategyType: 'FULL' }],
    applications: [
      { code: 'SUPPORT', description: 'Support desk', llmSystemPrompt: "You are ACME's support assistant." },
    ],
    agentTypes: [{ code: 'AUTO', description: 'Autonomous' }],
    agents: [
      {
        code: 'HELPDESK',
        description: 'Helpdesk',
        llmApplication: 'SUPPORT',
        llmAgentType: 'AUTO',
        llmAgentPrompt: 'You answer customer questions.',
        llmActionAchievesGoal: 'CHAT',
      },
    ],
    tools: [
      {
        code: 'ORDER_STATUS',
        description: 'Looks up the delivery status of an order.',
        llmToolBeanName: 'orderStatus',
        idempotent: true,
      },
      { code: 'CANCEL_ORDER', description: 'Cancels an order.', llmToolBeanName: 'orderStatus', approval: 'always' },
    ],
    actions: [
      action('CHAT'),
      action('ANSWER', { askUserQuestion: true, tools: ['ORDER_STATUS'] }),
      action('CANCEL', { tools: ['ORDER_STATUS', 'CANCEL_ORDER'] }),
    ],
  };
}
