/**
 * `AsyncResource#bind` without the deprecated `asyncResource` accessor on the bound function.
 *
 * Node 20 gives every function bound by an `AsyncResource` an `asyncResource` getter and setter (DEP0172), each a
 * `util.deprecate` wrapper that makes its own fresh function the wrapper's prototype. A function that becomes a
 * prototype gets a map of its own, allocated in the old space, so every bind leaves about 2 KB there.
 * `ClientHttp2Session#request` binds one function per stream, and the KV client opens a stream per etcd call: in the
 * benchmark's gets on etcd that was a quarter of what each GET left past a scavenge, and a mark-compact every 2 s
 * (the get tail of issue 18). Newer Node versions drop the accessor; there this does nothing.
 */
import { AsyncResource } from 'node:async_hooks';

let lean = false;

/** Whether this Node's `AsyncResource#bind` adds the deprecated accessor. */
export function bindAddsAccessor(): boolean {
  const bound = new AsyncResource('platform-probe').bind(() => undefined);
  return Object.getOwnPropertyDescriptor(bound, 'asyncResource') !== undefined;
}

type Fn = (...args: unknown[]) => unknown;

/** What Node's bind does, less the accessor. */
function leanBind<F extends Fn>(resource: AsyncResource, fn: F, thisArg: unknown): F {
  if (typeof fn !== 'function') throw new TypeError('The "fn" argument must be of type function');
  const bound =
    thisArg === undefined
      ? function (this: unknown, ...args: unknown[]): unknown {
          return resource.runInAsyncScope(fn, this, ...args);
        }
      : resource.runInAsyncScope.bind(resource, fn, thisArg);
  Object.defineProperty(bound, 'length', { configurable: true, enumerable: false, value: fn.length, writable: false });
  return bound as F;
}

/**
 * Makes `AsyncResource#bind` in this process bind as before (the function runs in the resource's async scope, with
 * the `this` it is called with unless one was given, and keeps its `length`), without the deprecated accessor.
 */
export function useLeanAsyncResourceBind(): void {
  if (lean || !bindAddsAccessor()) return;
  lean = true;
  AsyncResource.prototype.bind = function bind<F extends Fn>(this: AsyncResource, fn: F, thisArg?: unknown): F {
    return leanBind(this, fn, thisArg);
  };
}
