/**
 * Autoregistration (model: kube-aggregator 1.21 `pkg/controllers/autoregister/autoregister_controller.go`): keeps
 * a local APIService for every group version the server serves itself, so that the APIServices are the whole
 * routing table and discovery order of the API.
 *
 * Two kinds of desired APIServices, told apart by the label `kube-aggregator.platform/automanaged`:
 * - `onstart` (the built-in group versions): created when missing and updated to the desired spec; one that is no
 *   longer desired is deleted at the first pass only (a group version turned off with `--runtime-config`).
 * - `true` (group versions that come and go while the server runs, the custom resources' ones): created, updated
 *   and deleted as the desired set changes.
 * An APIService without the label belongs to its writer and is never touched, even if its name is desired.
 */
import { type ApiObject, type APIService, isStatusError } from '@platform/api';

import { type GenericStore } from '../registry/generic/store';
import { type RequestContext } from '../registry/rest/rest';
import { type Priority } from './priorities';

/** The label that marks APIServices this controller manages. */
export const AUTOMANAGED_LABEL = 'kube-aggregator.platform/automanaged';

/** A local group version that must have an APIService. */
export interface LocalGroupVersion {
  group: string;
  version: string;
  priority: Priority;
}

/** The name of the APIService of a group version: `<version>.<group>` (`v1.` for the core group, as 1.21 names it). */
export function apiServiceName(group: string, version: string): string {
  return `${version}.${group}`;
}

type Mode = 'onstart' | 'true';

interface Desired {
  gv: LocalGroupVersion;
  mode: Mode;
}

/** What autoregistration reads and writes. */
export interface AutoRegistrationHost {
  /** The APIServices as the informer has them now. */
  current(): ReadonlyMap<string, APIService>;
  /** The `apiservices` store (written without admission, as the server itself). */
  store(): GenericStore | undefined;
  now: () => number;
  log: { warn(msg: string, fields?: Record<string, unknown>): void };
}

/** Keeps the local APIServices. `sync()` is idempotent; call it on every change and periodically. */
export class AutoRegistration {
  private readonly onStart = new Map<string, LocalGroupVersion>();
  /** Owner (a caller of `setGroupVersions`) → its group versions, kept in sync continuously. */
  private readonly continuous = new Map<string, LocalGroupVersion[]>();
  private firstPassDone = false;
  private syncing: Promise<void> | undefined;
  private again = false;

  constructor(private readonly host: AutoRegistrationHost) {}

  /** The built-in group versions (registered at start). */
  setBuiltin(gvs: readonly LocalGroupVersion[]): void {
    this.onStart.clear();
    for (const gv of gvs) this.onStart.set(apiServiceName(gv.group, gv.version), gv);
  }

  /**
   * The group versions an owner serves now (the custom resources' served versions): each gets a local APIService,
   * and the APIServices of the owner's earlier group versions that are gone are deleted. The next `sync()` applies it.
   */
  setGroupVersions(owner: string, gvs: readonly LocalGroupVersion[]): void {
    this.continuous.set(owner, [...gvs]);
  }

  private desired(): Map<string, Desired> {
    const out = new Map<string, Desired>();
    for (const [name, gv] of this.onStart) out.set(name, { gv, mode: 'onstart' });
    for (const gvs of this.continuous.values())
      for (const gv of gvs) {
        const name = apiServiceName(gv.group, gv.version);
        if (!out.has(name)) out.set(name, { gv, mode: 'true' });
      }
    return out;
  }

  /** The desired built-in APIServices that do not exist yet (the `autoregister-completion` check). */
  missing(): string[] {
    const current = this.host.current();
    return [...this.onStart.keys()].filter((name) => !current.has(name)).sort();
  }

  /** Brings the APIServices to the desired set; a pass asked for while one runs runs after it. */
  sync(): Promise<void> {
    if (this.syncing) {
      this.again = true;
      return this.syncing;
    }
    this.syncing = (async () => {
      do {
        this.again = false;
        await this.pass();
      } while (this.again);
    })().finally(() => (this.syncing = undefined));
    return this.syncing;
  }

  private async pass(): Promise<void> {
    const store = this.host.store();
    if (!store) return;
    const ctx: RequestContext = { namespace: '', now: this.host.now };
    const current = this.host.current();
    const desired = this.desired();
    const ops: Promise<void>[] = [];
    for (const [name, d] of desired) {
      const existing = current.get(name);
      const spec = {
        group: d.gv.group,
        version: d.gv.version,
        groupPriorityMinimum: d.gv.priority.group,
        versionPriority: d.gv.priority.version,
      };
      if (!existing) {
        const obj = {
          apiVersion: 'apiregistration.platform/v1',
          kind: 'APIService',
          metadata: { name, labels: { [AUTOMANAGED_LABEL]: d.mode } },
          spec,
        } as ApiObject;
        ops.push(this.write(name, () => store.create(ctx, obj, undefined, { dryRun: false })));
        continue;
      }
      const label = existing.metadata?.labels?.[AUTOMANAGED_LABEL];
      if (label !== 'onstart' && label !== 'true') continue;
      // Field by field, empty values as absent: the stored object omits empty strings (the core group's `group`
      // comes back unset), and a comparison that saw a difference there rewrote `v1.` in a loop.
      const has = existing.spec ?? ({} as NonNullable<APIService['spec']>);
      const same =
        has.service === undefined &&
        (has.group ?? '') === spec.group &&
        (has.version ?? '') === spec.version &&
        (has.groupPriorityMinimum ?? 0) === spec.groupPriorityMinimum &&
        (has.versionPriority ?? 0) === spec.versionPriority &&
        !has.insecureSkipTLSVerify &&
        !has.caBundle &&
        label === d.mode;
      if (same) continue;
      const updated = structuredClone(existing);
      updated.spec = spec;
      updated.metadata = { ...updated.metadata, labels: { ...updated.metadata?.labels, [AUTOMANAGED_LABEL]: d.mode } };
      ops.push(
        this.write(name, () =>
          store.update(
            ctx,
            { name, updatedObject: () => Promise.resolve(updated as ApiObject) },
            undefined,
            undefined,
            { dryRun: false },
          ),
        ),
      );
    }
    for (const [name, existing] of current) {
      if (desired.has(name)) continue;
      const label = existing.metadata?.labels?.[AUTOMANAGED_LABEL];
      if (label === 'true' || (label === 'onstart' && !this.firstPassDone))
        ops.push(this.write(name, () => store.delete(ctx, name, undefined, { dryRun: false })));
    }
    await Promise.all(ops);
    this.firstPassDone = true;
  }

  /** One write; a conflict or a race with another server is settled by the next pass. */
  private async write(name: string, op: () => Promise<unknown>): Promise<void> {
    try {
      await op();
    } catch (err) {
      if (isStatusError(err) && [404, 409].includes(err.status.code)) return;
      this.host.log.warn('Autoregistration could not write an APIService; will retry', { name, err });
    }
  }
}
