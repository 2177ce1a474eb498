/**
 * Objects that are never changed again: the watch cache deep-freezes every object it holds and hands the same
 * instance to every reader (lists, gets at resourceVersion=0, every watcher of an event). Marking them lets the
 * response writers serialize each such object once and reuse the bytes (`endpoints/responses/encode-cache.ts`),
 * which is what makes a 5,000-item list and a 100-watcher fan-out cheap.
 */

const immutable = new WeakSet<object>();

/** Freezes an object graph in place (JSON-like data: no cycles) and marks its root immutable. */
export function deepFreeze<T>(obj: T): T {
  if (typeof obj === 'object' && obj !== null) {
    freeze(obj);
    immutable.add(obj);
  }
  return obj;
}

function freeze(obj: object): void {
  if (Object.isFrozen(obj)) return;
  Object.freeze(obj);
  for (const v of Object.values(obj)) if (typeof v === 'object' && v !== null) freeze(v);
}

/** True for objects `deepFreeze` froze: they and everything they reach can never change. */
export function isImmutable(obj: unknown): obj is object {
  return typeof obj === 'object' && obj !== null && immutable.has(obj);
}
