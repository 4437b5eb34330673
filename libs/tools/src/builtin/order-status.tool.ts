import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { ParleyTool, type InProcessTool } from '../registry/parley-tool.decorator';

const BASE_DATE = Date.UTC(2026, 0, 1);
const DAY_MS = 86_400_000;

export interface OrderStatus {
  orderId: string;
  status: 'shipped';
  /** Expected delivery day, YYYY-MM-DD. */
  eta: string;
}

/**
 * The demo's in-process tool. The answer is derived from the order id alone, so every run (and
 * every replay of a recorded conversation) sees the same one.
 */
@ParleyTool({
  name: 'orderStatus',
  description: 'Looks up the shipping status and expected delivery date of an order.',
  parameters: {
    type: 'object',
    properties: { orderId: { type: 'string', minLength: 1, description: 'The order number, e.g. A-1001' } },
    required: ['orderId'],
    additionalProperties: false,
  },
})
@Injectable()
export class OrderStatusTool implements InProcessTool {
  execute(args: Record<string, unknown>): OrderStatus {
    const orderId = String(args.orderId);
    const days = createHash('sha256').update(orderId).digest().readUInt16BE(0) % 60;
    return { orderId, status: 'shipped', eta: new Date(BASE_DATE + days * DAY_MS).toISOString().slice(0, 10) };
  }
}
