/**
 * Fair queuing for one priority level (model: Kubernetes 1.21 `apiserver/pkg/util/flowcontrol/fairqueuing/queueset`
 * and `pkg/util/shufflesharding`). A flow (flow schema + distinguisher) is hashed and shuffle-sharded onto a hand
 * of `handSize` of the level's `queues`; a request joins the shortest queue of its hand, or is rejected when that
 * queue holds `queueLengthLimit` requests. Requests are dispatched while fewer than the level's concurrency limit
 * execute, from the queue whose virtual start time is the lowest, so that every active queue gets an equal share of
 * the level's concurrency whatever the rates of the flows (fair queuing in virtual time: the virtual clock advances at
 * min(executing, limit) / active queues; each dispatch charges its queue an estimated service time G, corrected
 * with the actual time when the request ends).
 *
 * A level whose limit response is Reject has no queues (`queues: 0`): a request executes at once or is rejected.
 * Everything runs on the event loop: no locks; the clock is injected (tests drive it by hand).
 */

/** The time source and timers of a queue set. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real clock. */
export const REAL_CLOCK: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** The configuration of a queue set. */
export interface QueueSetConfig {
  /** The priority level's name (dumps). */
  name: string;
  /** How many requests may execute at once (the level's assured concurrency value, at least 1). */
  concurrencyLimit: number;
  /** 0: no queuing (the Reject limit response). */
  queues: number;
  handSize: number;
  queueLengthLimit: number;
  /** How long a request may wait in a queue before it is rejected, ms. */
  requestWaitLimitMs: number;
}

/** Why a request was not executed (the `reason` label of `apiserver_flowcontrol_rejected_requests_total`). */
export type RejectReason = 'queue-full' | 'concurrency-limit' | 'time-out' | 'cancelled';

/** The answer to {@link QueueSet.startRequest}. */
export type Admission =
  | { execute: true; queued: boolean; waitedMs: number; finish(): void }
  | { execute: false; reason: RejectReason; waitedMs: number };

/** What a request carries through the queues (for dumps). */
export interface RequestDescription {
  flowSchema: string;
  distinguisher: string;
  user?: string;
  verb?: string;
  path?: string;
  namespace?: string;
  name?: string;
  apiVersion?: string;
  resource?: string;
  subresource?: string;
}

/** The estimated service time G charged at dispatch, seconds (1.21's value). */
const ESTIMATED_SERVICE_SECONDS = 60;

interface Waiting {
  descr: RequestDescription;
  arrivedAt: number;
  queue: Queue;
  resolve(a: Admission): void;
  timer: unknown;
  detach(): void;
}

interface Queue {
  index: number;
  waiting: Waiting[];
  executing: number;
  /** Virtual time (seconds) at which the queue's next request starts in the fluid model. */
  virtualStart: number;
}

/** A snapshot of a queue set for the debug endpoints. */
export interface QueueSetDump {
  queues: {
    index: number;
    waiting: { descr: RequestDescription; arrivedAt: number }[];
    executing: number;
    virtualStart: number;
  }[];
  waiting: number;
  executing: number;
}

/** The queues and executing requests of one priority level. */
export class QueueSet {
  private queues: Queue[] = [];
  private executing = 0;
  private waitingTotal = 0;
  private virtualTime = 0;
  private lastRealTime: number;
  /** Where the search for the next queue starts, so that ties rotate. */
  private robin = 0;

  constructor(
    private config: QueueSetConfig,
    private readonly clock: Clock = REAL_CLOCK,
  ) {
    this.lastRealTime = clock.now();
    this.resize();
  }

  /** Applies a new configuration; requests already queued stay where they are. */
  setConfig(config: QueueSetConfig): void {
    this.syncTime();
    this.config = config;
    this.resize();
    this.dispatchAsMuchAsPossible();
  }

  get limit(): number {
    return this.config.concurrencyLimit;
  }

  /** Requests waiting in the queues. */
  get waitingCount(): number {
    return this.waitingTotal;
  }

  /** Requests executing. */
  get executingCount(): number {
    return this.executing;
  }

  /** Nothing waiting and nothing executing. */
  isIdle(): boolean {
    return this.executing === 0 && this.waitingTotal === 0;
  }

  private resize(): void {
    // Queues beyond the new count keep draining; new requests are dealt among the first `queues` only.
    for (let i = this.queues.length; i < this.config.queues; i++) {
      this.queues.push({ index: i, waiting: [], executing: 0, virtualStart: this.virtualTime });
    }
  }

  /**
   * Admits a request of the flow whose hash is `flowHash`: resolves when it may execute (the caller must call
   * `finish()` when it ends) or is rejected. `signal` aborting while the request waits removes it (`cancelled`).
   */
  startRequest(flowHash: bigint, descr: RequestDescription, signal?: AbortSignal): Promise<Admission> {
    this.syncTime();
    const arrivedAt = this.clock.now();
    if (this.config.queues === 0) {
      if (this.executing >= this.config.concurrencyLimit)
        return Promise.resolve({ execute: false, reason: 'concurrency-limit', waitedMs: 0 });
      return Promise.resolve(this.run(undefined, arrivedAt, false));
    }
    const queue = this.chooseQueue(flowHash);
    if (queue.waiting.length >= this.config.queueLengthLimit)
      return Promise.resolve({ execute: false, reason: 'queue-full', waitedMs: 0 });
    if (signal?.aborted) return Promise.resolve({ execute: false, reason: 'cancelled', waitedMs: 0 });
    return new Promise<Admission>((resolve) => {
      // A queue that becomes active starts at the current virtual time (it has no credit or debt from its past).
      if (queue.waiting.length === 0 && queue.executing === 0) queue.virtualStart = this.virtualTime;
      const onAbort = (): void => this.remove(w, 'cancelled');
      const w: Waiting = {
        descr,
        arrivedAt,
        queue,
        resolve,
        timer: this.clock.setTimeout(() => this.remove(w, 'time-out'), this.config.requestWaitLimitMs),
        detach: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      queue.waiting.push(w);
      this.waitingTotal++;
      this.dispatchAsMuchAsPossible();
    });
  }

  /** Takes a waiting request out of its queue and rejects it. */
  private remove(w: Waiting, reason: RejectReason): void {
    const i = w.queue.waiting.indexOf(w);
    if (i < 0) return;
    this.syncTime();
    w.queue.waiting.splice(i, 1);
    this.waitingTotal--;
    this.clock.clearTimeout(w.timer);
    w.detach();
    w.resolve({ execute: false, reason, waitedMs: this.clock.now() - w.arrivedAt });
  }

  /** Deals the flow's hand and picks its shortest queue (waiting plus executing; the first of equals). */
  private chooseQueue(flowHash: bigint): Queue {
    let best: Queue | undefined;
    let bestLength = Infinity;
    for (const i of dealHand(flowHash, this.config.queues, Math.min(this.config.handSize, this.config.queues))) {
      const q = this.queues[i] as Queue;
      const length = q.waiting.length + q.executing;
      if (length < bestLength) {
        best = q;
        bestLength = length;
      }
    }
    return best as Queue;
  }

  /** Advances the virtual clock to now. */
  private syncTime(): void {
    const now = this.clock.now();
    const elapsed = (now - this.lastRealTime) / 1000;
    this.lastRealTime = now;
    let active = 0;
    for (const q of this.queues) if (q.waiting.length > 0 || q.executing > 0) active++;
    const running = Math.min(this.executing, this.config.concurrencyLimit);
    if (active > 0 && running > 0 && elapsed > 0) this.virtualTime += (elapsed * running) / active;
  }

  private dispatchAsMuchAsPossible(): void {
    while (this.waitingTotal > 0 && this.executing < this.config.concurrencyLimit) {
      const q = this.nextQueue();
      if (!q) return;
      const w = q.waiting.shift() as Waiting;
      this.waitingTotal--;
      this.clock.clearTimeout(w.timer);
      w.detach();
      q.virtualStart += ESTIMATED_SERVICE_SECONDS;
      w.resolve(this.run(q, w.arrivedAt, true));
    }
  }

  /** The non-empty queue with the lowest virtual start (ties: the first from the rotating start). */
  private nextQueue(): Queue | undefined {
    let best: Queue | undefined;
    const n = this.queues.length;
    for (let k = 0; k < n; k++) {
      const q = this.queues[(this.robin + k) % n] as Queue;
      if (q.waiting.length === 0) continue;
      if (!best || q.virtualStart < best.virtualStart) best = q;
    }
    if (best) this.robin = (best.index + 1) % n;
    return best;
  }

  private run(queue: Queue | undefined, arrivedAt: number, queued: boolean): Admission {
    const startedAt = this.clock.now();
    this.executing++;
    if (queue) queue.executing++;
    let finished = false;
    return {
      execute: true,
      queued,
      waitedMs: startedAt - arrivedAt,
      finish: () => {
        if (finished) return;
        finished = true;
        this.syncTime();
        this.executing--;
        if (queue) {
          queue.executing--;
          // The dispatch charged G; the request used its real service time.
          queue.virtualStart -= ESTIMATED_SERVICE_SECONDS - (this.clock.now() - startedAt) / 1000;
        }
        this.dispatchAsMuchAsPossible();
      },
    };
  }

  /** A snapshot of the queues (debug endpoints). */
  dump(): QueueSetDump {
    this.syncTime();
    return {
      queues: this.queues.map((q) => ({
        index: q.index,
        waiting: q.waiting.map((w) => ({ descr: w.descr, arrivedAt: w.arrivedAt })),
        executing: q.executing,
        virtualStart: q.virtualStart,
      })),
      waiting: this.waitingTotal,
      executing: this.executing,
    };
  }
}

const FNV64_OFFSET = 0xcbf29ce484222325n;
const FNV64_PRIME = 0x100000001b3n;
const MASK64 = (1n << 64n) - 1n;

/** The 64-bit FNV-1a hash of a flow: its flow schema's name and its distinguisher (1.21's `hashFlowID`). */
export function hashFlow(flowSchema: string, distinguisher: string): bigint {
  let h = FNV64_OFFSET;
  for (const b of Buffer.from(`${flowSchema}\u0001${distinguisher}`, 'utf8')) {
    h ^= BigInt(b);
    h = (h * FNV64_PRIME) & MASK64;
  }
  return h;
}

/**
 * Shuffle sharding: `handSize` distinct queue indices in [0, deckSize) drawn from `hash` as digits of a mixed radix
 * number (deckSize, deckSize-1, ...), each digit choosing among the cards not dealt yet. Different flows get mostly
 * different hands, so one heavy flow fills only its own few queues.
 */
export function dealHand(hash: bigint, deckSize: number, handSize: number): number[] {
  const hand: number[] = [];
  let rest = hash;
  for (let i = 0; i < handSize; i++) {
    const radix = BigInt(deckSize - i);
    let pick = Number(rest % radix);
    rest /= radix;
    // The pick-th card among those not dealt yet (hand kept sorted for the scan).
    for (const dealt of [...hand].sort((a, b) => a - b)) if (dealt <= pick) pick++;
    hand.push(pick);
  }
  return hand;
}
