import { abortableDelay } from './profiling';

describe('abortableDelay', () => {
  it('resolves at once when the signal is already aborted, and early when it aborts', async () => {
    const done = new AbortController();
    done.abort();
    await expect(abortableDelay(3_600_000, done.signal)).resolves.toBeUndefined();
    const c = new AbortController();
    const p = abortableDelay(3_600_000, c.signal);
    c.abort();
    await expect(p).resolves.toBeUndefined();
  });

  it('resolves after the time when not aborted', async () => {
    jest.useFakeTimers();
    try {
      let resolved = false;
      const p = abortableDelay(1000, new AbortController().signal).then(() => (resolved = true));
      await jest.advanceTimersByTimeAsync(999);
      expect(resolved).toBe(false);
      await jest.advanceTimersByTimeAsync(1);
      await p;
      expect(resolved).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });
});
