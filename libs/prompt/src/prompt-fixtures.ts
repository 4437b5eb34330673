import type { PromptInput } from './assemble-prompt';
import type { PromptSchema } from './schema-prompt';

/** Catalogs the golden tests assemble; each has a file of the expected bytes in __golden__/. */

const orderSchema: PromptSchema = {
  code: 'ORDER',
  description: 'The order the customer asks about',
  direction: 'I',
  cardinality: 'I',
  jsonSchema: {
    type: 'object',
    required: ['orderId', 'lines'],
    properties: {
      orderId: { type: 'string', description: 'Order number, e.g. A-1001' },
      placedAt: { type: 'string', format: 'date-time' },
      status: { enum: ['open', 'shipped', 'delivered'] },
      customer: { $ref: '#/$defs/customer' },
      lines: {
        type: 'array',
        description: 'One line per product',
        items: {
          type: 'object',
          required: ['sku'],
          properties: { sku: { type: 'string' }, quantity: { type: 'integer', description: 'How many' } },
        },
      },
      tags: { type: 'array', items: { type: 'string' } },
      note: { type: ['string', 'null'] },
    },
    $defs: {
      customer: {
        type: 'object',
        description: 'Who placed the order',
        required: ['name'],
        properties: { name: { type: 'string' }, email: { type: 'string', format: 'email' } },
      },
    },
  },
};

const historySchema: PromptSchema = {
  code: 'HISTORY',
  description: null,
  direction: 'M',
  cardinality: 'L',
  jsonSchema: {
    type: 'object',
    description: 'Earlier contacts with this customer',
    properties: { at: { type: 'string', format: 'date' }, summary: { type: 'string' } },
  },
};

const replySchema: PromptSchema = {
  code: 'REPLY',
  description: 'The answer to send',
  direction: 'O',
  cardinality: 'I',
  jsonSchema: {
    type: 'object',
    required: ['answer', 'confidence'],
    properties: {
      answer: { type: 'string', description: 'Text for the customer' },
      confidence: { type: 'number', description: 'Between 0 and 1' },
      followUp: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    },
  },
};

export const promptCatalogs: Record<string, PromptInput> = {
  'full-support': {
    applicationPrompt: "You are ACME's support assistant.",
    agentPrompt: 'You answer customer questions about orders.',
    personaPrompt: 'Write like a calm, concise editor.',
    skills: [
      { code: 'TONE', prompt: 'keep a friendly tone', description: 'Friendly tone', disclosure: 'always' },
      { code: 'REFUND', prompt: 'Explain the refund policy.', description: 'Refund rules', disclosure: 'always' },
      { code: 'RMA', prompt: 'Open a return.', description: 'Returns and exchanges', disclosure: 'on_request' },
    ],
    mcpClients: [
      { name: 'everything', description: 'Demo tools: echo, add, long-running operations' },
      { name: 'files', description: null },
    ],
    schemas: [orderSchema, historySchema, replySchema],
    constraintPrompt: 'Never invent order data.',
    actionPrompt: 'Answer briefly.',
  },
  'plain-chat': {
    applicationPrompt: 'You are a helpful assistant.',
    agentPrompt: 'You chat with employees.',
    personaPrompt: 'Be concise.',
    actionPrompt: 'Answer in one or two sentences.',
  },
  'empty-parts-skipped': {
    applicationPrompt: '',
    agentPrompt: '   \n ',
    personaPrompt: null,
    skills: [
      { code: 'NONE', prompt: null, description: null, disclosure: 'always' },
      { code: 'SUMM', prompt: '  summarize long threads  ', description: 'Summaries', disclosure: 'always' },
      { code: 'HIDE', prompt: 'hidden', description: '', disclosure: 'on_request' },
    ],
    mcpClients: [],
    schemas: [],
    constraintPrompt: undefined,
    actionPrompt: 'Summarize the thread.',
  },
  'output-only': {
    agentPrompt: 'You classify tickets.',
    schemas: [
      {
        code: 'LABELS',
        description: 'One label per ticket',
        direction: 'O',
        cardinality: 'L',
        jsonSchema: { type: 'string', enum: ['bug', 'question', 'feature'] },
      },
    ],
    constraintPrompt: 'Reply with JSON only.',
  },
};
