/**
 * Waits for the caches a controller reads, and only those. The daemon's informer factory is shared by every
 * controller, and `InformerFactory.waitForCacheSync` waits for all of its informers, including those another
 * controller asked for later (the garbage collector's, after discovery) or cannot list: a controller waiting on
 * them would not start.
 */
export async function waitForSynced(
  signal: AbortSignal,
  informers: readonly { hasSynced(): boolean }[],
  pollMs = 50,
): Promise<boolean> {
  while (!informers.every((i) => i.hasSynced())) {
    if (signal.aborted) return false;
    await new Promise((r) => setTimeout(r, pollMs));
  }
  return !signal.aborted;
}
