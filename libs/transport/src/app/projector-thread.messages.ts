/** What the main thread sends the projector thread. */
export type ToProjector = { type: 'append' } | { type: 'stop' };

/** What the projector thread sends back. */
export type FromProjector =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  | { type: 'lag'; values: Record<string, number | null> }
  | { type: 'stopped' };

/** How often the projector thread reports its projection lag when it changed. */
export const LAG_EVERY_MS = 250;
