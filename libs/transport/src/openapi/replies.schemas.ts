import { z } from 'zod';

/** The one error shape of every route (docs/api.md), for the OpenAPI document. */
export const errorReply = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});
