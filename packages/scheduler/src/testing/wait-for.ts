/** Polls `f` every 50 ms until it gives a truthy value; fails naming `what` after `ms` (generous: loaded CI). */
export async function waitFor<T>(what: string, f: () => Promise<T | undefined | false>, ms = 45_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
