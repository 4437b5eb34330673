/**
 * A signal for one SDK request that follows the caller's only while the request runs. The SDK
 * never removes the abort listener it adds to a request's signal, so a caller's signal that fires
 * after the answer (the tool call's timeout always does; a turn may be stopped later) would still
 * send the server a `notifications/cancelled` for a request long done, one per call.
 */
export function requestSignal(caller: AbortSignal | undefined): { signal?: AbortSignal; release(): void } {
  if (!caller) return { release: () => undefined };
  const own = new AbortController();
  const follow = () => own.abort(caller.reason);
  if (caller.aborted) follow();
  else caller.addEventListener('abort', follow, { once: true });
  return { signal: own.signal, release: () => caller.removeEventListener('abort', follow) };
}
