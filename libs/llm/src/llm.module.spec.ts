import { Test } from '@nestjs/testing';
import { ConfigModule, loadConfig } from '@parley/config';
import { startSimulator } from '@parley/testing';
import { LlmClient } from './llm-client';
import { LlmModule } from './llm.module';
import { LLM_PORT } from './llm.port';
import { OpenAiCompatibleAdapter } from './openai-compatible.adapter';
import { requestFor } from './llm.spec-helpers';

describe('LlmModule', () => {
  it('provides the OpenAI-compatible adapter as LLM_PORT and a client retrying as configured', async () => {
    const sim = await startSimulator();
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(loadConfig({ LLM_RETRY_COUNT: '2', LLM_RETRY_DELAY_MS: '1' })), LlmModule],
    }).compile();
    try {
      expect(moduleRef.get(LLM_PORT)).toBeInstanceOf(OpenAiCompatibleAdapter);
      sim.script([{ reply: { fail: { status: 503 } } }]);
      await expect(moduleRef.get(LlmClient).call(requestFor(sim, 'hi'))).rejects.toMatchObject({ kind: 'overloaded' });
      expect(sim.requests).toHaveLength(2);
    } finally {
      await moduleRef.close();
      await sim.close();
    }
  });
});
