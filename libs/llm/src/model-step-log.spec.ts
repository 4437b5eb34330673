import { modelStepLine } from './model-step-log';

describe('modelStepLine', () => {
  it('names the model, the tool step, the latency and the trace id, with the caller’s keys', () => {
    expect(
      modelStepLine(
        { modelName: 'm', toolStep: 2, latencyMs: 40, traceId: 't-1', outcome: 'ok', attempts: 1, finishReason: 'ST' },
        { generate_id: 'g' },
      ),
    ).toEqual({
      msg: 'model step 2 of m: ok in 40 ms',
      model_name: 'm',
      tool_step: 2,
      latency_ms: 40,
      outcome: 'ok',
      attempts: 1,
      generate_id: 'g',
      trace_id: 't-1',
      finish_reason: 'ST',
    });
  });

  it('leaves out what it was not given', () => {
    const line = modelStepLine({ modelName: 'm', toolStep: 0, latencyMs: 5, outcome: 'error', attempts: 3 });
    expect(line).not.toHaveProperty('input_tokens');
    expect(line).not.toHaveProperty('trace_id');
  });
});
