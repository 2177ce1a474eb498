/**
 * The shared index informer (model: client-go `tools/cache/reflector.go`, `shared_informer.go`). Its reflector
 * lists, then watches from the list's resourceVersion with bookmarks. As client-go's
 * `relistResourceVersion`, the first list asks for resourceVersion "0" (the API server's watch cache answers, at the
 * cache's own revision, from which a watch can start at once: a list from the store is at the store's current
 * revision, which the cache of a resource nobody writes reaches only at its next progress notification), a relist
 * asks for "not older than" the last resourceVersion seen, and one after a list refused that resourceVersion (too
 * old, or too large for the server answering) asks for the latest state, in pages of 500. A watch that ends, or a
 * connection that drops, is resumed from the last resourceVersion seen (an event's or a bookmark's); a 410
 * (`Expired`/`Gone`) means the history is compacted, so it lists again. Failures back off exponentially with
 * jitter (800 ms → 30 s).
 *
 * Every change goes to the store first, then to every handler, synchronously and in order. A relist compares the
 * fresh list with the store: new objects are adds, objects whose resourceVersion changed are updates, and
 * objects that vanished are deletes carrying a {@link DeletedFinalStateUnknown} (their last state was missed).
 * Unchanged objects produce no call, so no handler hears of the same change twice. Resync (when configured)
 * replays the store to handlers as updates with `oldObj === newObj`.
 */
import { type ApiObject, isGone, isResourceExpired, isStatusError, isTooLargeResourceVersion } from '@platform/api';
import { type Logger, NOP_LOGGER } from '@platform/common';

import { type ListOptions, type ObjectList } from '../rest/resource-client';
import { type Clock, REAL_CLOCK } from '../util/clock';
import { type Watch } from '../watch/watch';
import { Backoff } from './backoff';
import { type IndexFunc, type Indexer, metaNamespaceKey, Store } from './store';

/** Lists and watches one resource (a `ResourceClient` is one). */
export interface ListerWatcher<T> {
  list(o: ListOptions): Promise<ObjectList<T>>;
  watch(o: ListOptions): Promise<Watch<T>>;
}

/** The last known state of an object whose deletion was missed (seen only as absent from a relist). */
export interface DeletedFinalStateUnknown<T> {
  readonly deletedFinalStateUnknown: true;
  key: string;
  obj: T;
}

/** True for a {@link DeletedFinalStateUnknown} tombstone. */
export function isDeletedFinalStateUnknown<T>(o: T | DeletedFinalStateUnknown<T>): o is DeletedFinalStateUnknown<T> {
  return (
    typeof o === 'object' &&
    o !== null &&
    (o as { deletedFinalStateUnknown?: unknown }).deletedFinalStateUnknown === true
  );
}

/**
 * What an informer tells. Called synchronously after the store changed; must not block and should only enqueue
 * keys. A handler that throws is logged and does not affect others.
 */
export interface EventHandler<T> {
  onAdd?(obj: T, isInInitialList: boolean): void;
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T | DeletedFinalStateUnknown<T>): void;
}

/** A registered handler; `remove()` stops calls to it. */
export interface HandlerRegistration {
  remove(): void;
  /** True once the handler has been given the initial list. */
  hasSynced(): boolean;
}

/** Settings of an informer. */
export interface SharedInformerOptions {
  /** Resync period (ms); 0 disables resync. */
  resyncPeriodMs?: number;
  /** List page size (500). */
  pageSize?: number;
  clock?: Clock;
  logger?: Logger;
  random?: () => number;
  /** Bounds of the server-side watch time-out the reflector asks for (s); random between them (5–10 min). */
  minWatchTimeoutSeconds?: number;
}

/** A shared informer over one resource. */
export class SharedIndexInformer<T extends ApiObject> {
  private readonly store = new Store<T>();
  private readonly handlers = new Set<{ h: EventHandler<T>; synced: boolean }>();
  private synced = false;
  private started = false;
  private rv = '';
  /** The last list refused `rv` (Expired, Gone, or too large for the server): list the latest state instead. */
  private rvUnavailable = false;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly random: () => number;
  private readonly pageSize: number;
  private readonly backoff: Backoff;
  private currentWatch?: Watch<T>;
  /** Counters of what the reflector did (tests and metrics read them). */
  readonly stats = { lists: 0, watches: 0, expired: 0, watchErrors: 0 };

  constructor(
    readonly lw: ListerWatcher<T>,
    private readonly o: SharedInformerOptions = {},
  ) {
    this.clock = o.clock ?? REAL_CLOCK;
    this.log = o.logger ?? NOP_LOGGER;
    this.random = o.random ?? Math.random;
    this.pageSize = o.pageSize ?? 500;
    this.backoff = new Backoff({ clock: this.clock, random: this.random });
  }

  /** The cache. Objects in it are shared: never mutate them. */
  get indexer(): Indexer<T> {
    return this.store;
  }

  /** Adds indexes (before or after start). Throws when a name is taken. */
  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    this.store.addIndexers(indexers);
  }

  /** True once the first list has been stored and delivered. */
  hasSynced(): boolean {
    return this.synced;
  }

  /** The resourceVersion the informer is at. */
  lastSyncResourceVersion(): string {
    return this.rv;
  }

  /**
   * Registers a handler. Added after the informer synced, it is first given every cached object as an add
   * (`isInInitialList` true).
   */
  addEventHandler(h: EventHandler<T>): HandlerRegistration {
    const entry = { h, synced: false };
    this.handlers.add(entry);
    if (this.synced) {
      for (const obj of this.store.list()) this.call(() => h.onAdd?.(obj, true));
      entry.synced = true;
    }
    return { remove: () => this.handlers.delete(entry), hasSynced: () => entry.synced };
  }

  private call(f: () => void): void {
    try {
      f();
    } catch (err) {
      this.log.error('Event handler failed', { error: String(err) });
    }
  }

  private emit(f: (h: EventHandler<T>) => void): void {
    for (const e of this.handlers) this.call(() => f(e.h));
  }

  /** Interrupts the current watch, as a dropped connection would (tests; operators' debugging). */
  dropWatch(): void {
    const w = this.currentWatch;
    if (w) (w as { fail?: (e: Error) => void }).fail?.(new Error('watch dropped on request'));
  }

  /** Runs the reflector until `signal` aborts. Can be run once. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error('informer already started');
    this.started = true;
    const resync = this.o.resyncPeriodMs ?? 0;
    const resyncLoop = resync > 0 ? this.resyncLoop(resync, signal) : Promise.resolve();
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.listAndReplace(signal);
          needList = false;
        }
        await this.watchOnce(signal);
        this.backoff.reset();
        continue; // the server ended the watch: resume from the last resourceVersion at once
      } catch (err) {
        if (signal.aborted) break;
        if (
          (isStatusError(err) && (isResourceExpired(err) || isGone(err))) ||
          (isStatusError(err) && err.code === 410)
        ) {
          this.stats.expired++;
          this.log.info('Watch expired; listing again', { resourceVersion: this.rv, error: err.message });
          needList = true;
          continue; // a relist is what fixes it: no delay (client-go relists at once on "too old")
        }
        this.stats.watchErrors++;
        const delay = this.backoff.next();
        this.log.warn('List or watch failed; retrying', { error: String(err), delayMs: delay, willList: needList });
        try {
          await this.clock.sleep(delay, signal);
        } catch {
          break;
        }
      }
    }
    await resyncLoop;
  }

  private async resyncLoop(periodMs: number, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.clock.sleep(periodMs, signal);
      } catch {
        return;
      }
      if (!this.synced) continue;
      for (const obj of this.store.list()) this.emit((h) => h.onUpdate?.(obj, obj));
    }
  }

  /** Lists every page, then brings the store to the list's state with minimal deltas. */
  private async listAndReplace(signal: AbortSignal): Promise<void> {
    this.stats.lists++;
    const items: T[] = [];
    let cont: string | undefined;
    let rv = '';
    const from = this.rvUnavailable ? '' : this.rv || '0';
    for (;;) {
      let page: ObjectList<T>;
      try {
        // As client-go's reflector: a list at a resourceVersion asks for no pages, so that the watch cache answers
        // it (with a limit, "N" would be an exact read of the store at N, a revision the cache may no longer serve
        // watches from); only the latest state is listed in pages, from the store.
        page = await this.lw.list(
          from ? { resourceVersion: from, signal } : { limit: this.pageSize, continue: cont, signal },
        );
      } catch (err) {
        this.rvUnavailable = isResourceExpired(err) || isGone(err) || isTooLargeResourceVersion(err);
        throw err;
      }
      items.push(...page.items);
      if (!cont) rv = page.metadata?.resourceVersion ?? '';
      cont = page.metadata?.continue || undefined;
      if (!cont) break;
    }
    if (!rv) throw new Error('list response has no resourceVersion');
    this.rvUnavailable = false;
    const initial = !this.synced;
    const seen = new Set<string>();
    for (const raw of items) {
      const obj = raw;
      const key = metaNamespaceKey(obj);
      seen.add(key);
      const old = this.store.get(key);
      if (!old) {
        this.store.set(obj);
        this.emit((h) => h.onAdd?.(obj, initial));
      } else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) {
        this.store.set(obj);
        this.emit((h) => h.onUpdate?.(old, obj));
      }
    }
    for (const key of this.store.listKeys()) {
      if (seen.has(key)) continue;
      const old = this.store.delete(key) as T;
      const tombstone: DeletedFinalStateUnknown<T> = { deletedFinalStateUnknown: true, key, obj: old };
      this.emit((h) => h.onDelete?.(tombstone));
    }
    this.rv = rv;
    if (!this.synced) {
      this.synced = true;
      for (const e of this.handlers) e.synced = true;
    }
  }

  private async watchOnce(signal: AbortSignal): Promise<void> {
    const min = this.o.minWatchTimeoutSeconds ?? 300;
    const w = await this.lw.watch({
      resourceVersion: this.rv,
      allowWatchBookmarks: true,
      timeoutSeconds: Math.floor(min * (1 + this.random())),
      signal,
    });
    this.stats.watches++;
    this.currentWatch = w;
    const onAbort = (): void => w.stop();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const ev of w) {
        const obj = ev.object;
        const rv = obj.metadata?.resourceVersion;
        if (ev.type === 'BOOKMARK') {
          if (rv) this.rv = rv;
          continue;
        }
        const key = metaNamespaceKey(obj);
        const old = this.store.get(key);
        if (ev.type === 'DELETED') {
          if (old) {
            this.store.delete(key);
            this.emit((h) => h.onDelete?.(obj));
          }
        } else if (!old) {
          this.store.set(obj);
          this.emit((h) => h.onAdd?.(obj, false));
        } else if (old.metadata?.resourceVersion !== rv) {
          this.store.set(obj);
          this.emit((h) => h.onUpdate?.(old, obj));
        }
        if (rv) this.rv = rv;
        this.backoff.reset();
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.currentWatch = undefined;
    }
  }
}
