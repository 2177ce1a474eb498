import { EventQueue } from './event-queue';

async function drain<T>(q: EventQueue<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const v of q) out.push(v);
  return out;
}

test('delivers queued and later items in order, then ends', async () => {
  const q = new EventQueue<number>();
  q.push(1);
  q.push(2);
  const done = drain(q);
  await Promise.resolve();
  q.push(3);
  q.end();
  q.push(4); // ignored after end
  expect(await done).toEqual([1, 2, 3]);
});

test('fail() throws after the queued items are consumed; the first end or failure wins', async () => {
  const q = new EventQueue<string>();
  q.push('a');
  q.fail(new Error('boom'));
  q.fail(new Error('second'));
  const seen: string[] = [];
  await expect(
    (async () => {
      for await (const v of q) seen.push(v);
    })(),
  ).rejects.toThrow('boom');
  expect(seen).toEqual(['a']);
});

test('many items pass through without loss (the consumed head is trimmed)', async () => {
  const q = new EventQueue<number>();
  for (let i = 0; i < 5000; i++) q.push(i);
  q.end();
  const out = await drain(q);
  expect(out).toHaveLength(5000);
  expect(out[4999]).toBe(4999);
  expect(q.size).toBe(0);
});
