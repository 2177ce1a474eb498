/**
 * What a controller is to the controller manager (model: kube-controller-manager's `InitFunc` and
 * `ControllerContext`). Each controller lives in `controllers/<name>/` and exports one {@link ControllerDefinition};
 * `controllers/index.ts` lists them all, in start order. The daemon parses every definition's options with its own,
 * picks the controllers `--controllers` enables, gives each a {@link ControllerContext} and calls `run`.
 */
import { type Logger, type MetricsRegistry, OptionGroupBase } from '@platform/common';
import { type Clientset, type EventRecorder, type InformerFactory } from '@platform/client';

/** What a running controller gets from the controller manager. */
export interface ControllerContext {
  /** The controller's name, as in `--controllers` (`deployment`, `garbagecollector`). */
  readonly name: string;
  /**
   * The client the controller acts with: its own ServiceAccount's (`system:serviceaccount:system:<name>-controller`)
   * with `--use-service-account-credentials`, the controller manager's otherwise. Rate limited by `--api-qps`/`--api-burst`.
   */
  readonly client: Clientset;
  /**
   * The informers shared by every controller of the process. Ask for every informer before the first `await` of
   * `run`: the controller manager starts the informers asked for once every controller has been started (and
   * again for informers asked for later, e.g. by the garbage collector after discovery), then each controller
   * waits for the caches it needs (`informers.waitForCacheSync(signal)` or an informer's `hasSynced()`).
   */
  readonly informers: InformerFactory;
  /** Starts informers asked for after the controllers were started (those of `informers` not yet running). */
  startInformers(): void;
  /** Records Events with `source.component` `<name>-controller`, as Kubernetes' controllers do. */
  readonly recorder: EventRecorder;
  readonly logger: Logger;
  /** The process's registry (`/metrics`): give it to work queues (`new WorkQueue({ name, metrics })`). */
  readonly metrics: MetricsRegistry;
  /** The CA that API server certificates verify against (the client configuration's), when it has one. */
  readonly rootCA?: Buffer;
  /** Aborted when the controller manager stops (or loses its lease): finish the current sync and return. */
  readonly signal: AbortSignal;
  /**
   * Reports the controller's health to `/healthz` `/livez` `/readyz` (the check named after the controller):
   * undefined for healthy, else why not. Controllers that do not call it are healthy while they run.
   */
  setHealth(problem: string | undefined): void;
}

/** One controller, as `controllers/index.ts` lists it. */
export interface ControllerDefinition<O = unknown> {
  /** Its name in `--controllers`. */
  readonly name: string;
  /** Whether `*` includes it (Kubernetes: `bootstrapsigner` and `tokencleaner` are off by default). */
  readonly enabledByDefault: boolean;
  /**
   * The ServiceAccount in `system` it acts as with `--use-service-account-credentials`: Kubernetes' name for it,
   * which the API server's bootstrap policy binds to `system:controller:<account>` (`service-account-controller`,
   * `generic-garbage-collector`, ...). Default `<name>-controller`. `false`: it always acts with the controller
   * manager's own credentials (Kubernetes' tokens controller: it writes the token Secrets of every account, which
   * no ServiceAccount's role allows).
   */
  readonly serviceAccount?: string | false;
  /**
   * The options of Document 2 that tune it (`--concurrent-deployment-syncs`, ...), one family shown in `--help`
   * under its own title. A new instance per command line (defaults set in the constructor).
   */
  options?(): ControllerOptions<O>;
  /** Runs until `ctx.signal` aborts; resolves once stopped. Throwing fails the controller (logged, health check fails). */
  run(ctx: ControllerContext, options: O): Promise<void>;
}

/** The option family of one controller: Document 2's flags, and the values `run` gets. */
export abstract class ControllerOptions<O> extends OptionGroupBase<never> {
  /** The validated values (call after `validate()` returned no errors). */
  abstract values(): O;

  applyTo(): void {}
}
