/**
 * Dynamic provisioning of the persistent volume binder (model: Kubernetes 1.21 `pv_controller.go`
 * `provisionClaim`, `provisionClaimOperation`, `provisionClaimOperationExternal`, `rescheduleProvisioning`), with
 * 1.21's Events and messages. The volume of a claim is named `pvc-<claim uid>`, so a provisioning repeated after a
 * crash or a lost write finds the volume it made instead of making a second one.
 */
import {
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  claimClass,
  isAlreadyExists,
  isNotFound,
  type Node,
  NodeKind,
  type PersistentVolume,
  type PersistentVolumeClaim,
  PersistentVolumeKind,
  type StorageClass,
} from '@platform/api';

import { type ControllerContext } from '../../controller';
import { deleteHostPath, HOST_PATH_PLUGIN, provisionHostPath } from './host-path';

/** What the provisioner needs of its binder. */
export interface ProvisionerDeps {
  /** The StorageClass of a name, from the binder's informer (undefined when there is none). */
  storageClass(name: string): StorageClass | undefined;
  /** Writes the claim (remembered in the binder's overlay) and returns what the API server stored. */
  writeClaim(c: PersistentVolumeClaim): Promise<PersistentVolumeClaim>;
  /** Remembers a volume just created, so the next sync sees it before the informer does. */
  rememberVolume(pv: PersistentVolume): void;
}

/** The provisioner's settings (the binder's options). */
export interface ProvisionerConfig {
  enableDynamicProvisioning: boolean;
  enableHostPathProvisioner: boolean;
  hostPathRoot: string;
}

/** The name of the volume provisioned for `c` (1.21 `getProvisionedVolumeNameForClaim`). */
export function provisionedVolumeName(c: PersistentVolumeClaim): string {
  return `pvc-${c.metadata?.uid ?? ''}`;
}

/** Go's `%v` of a string slice: `[a b]`. */
function goList(xs: readonly string[]): string {
  return `[${xs.join(' ')}]`;
}

/** Provisions claims for the binder. */
export class Provisioner {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly o: ProvisionerConfig,
    private readonly deps: ProvisionerDeps,
  ) {}

  /** The claim's StorageClass, or undefined when it names none or one that does not exist. */
  classOf(c: PersistentVolumeClaim): StorageClass | undefined {
    const name = claimClass(c);
    return name ? this.deps.storageClass(name) : undefined;
  }

  /** Whether the claim's class binds on first consumer (1.21 `IsDelayBindingMode`; an unknown class: no). */
  isDelayBinding(c: PersistentVolumeClaim): boolean {
    return this.classOf(c)?.volumeBindingMode === 'WaitForFirstConsumer';
  }

  /**
   * Provisions a volume for a claim of a class that no volume matches (1.21 `provisionClaim`). Problems the user
   * must fix are Events on the claim, and the periodic sync tries again; a failed write throws (the binder retries).
   */
  async provisionClaim(c: PersistentVolumeClaim): Promise<void> {
    if (!this.o.enableDynamicProvisioning) return;
    const name = claimClass(c);
    const cls = this.classOf(c);
    if (!cls) {
      this.failed(c, `storageclass.storage.platform "${name}" not found`);
      return;
    }
    const provisioner = cls.provisioner;
    if (provisioner === HOST_PATH_PLUGIN) {
      await this.provisionInTree(c, cls);
      return;
    }
    if (provisioner.startsWith('kubernetes.io/')) {
      // An in-tree plugin this platform does not have (a cloud's disks, `kubernetes.io/no-provisioner`).
      this.failed(c, `no volume plugin matched name: ${provisioner}`);
      return;
    }
    await this.provisionExternal(c, provisioner);
  }

  private failed(c: PersistentVolumeClaim, message: string): void {
    this.ctx.recorder.event(c, 'Warning', 'ProvisioningFailed', message);
  }

  /** Sets `volume.beta.kubernetes.io/storage-provisioner` (1.21 `setClaimProvisioner`). */
  private async setClaimProvisioner(c: PersistentVolumeClaim, provisioner: string): Promise<PersistentVolumeClaim> {
    if (c.metadata?.annotations?.[ANN_STORAGE_PROVISIONER] === provisioner) return c;
    const next = structuredClone(c);
    next.metadata = {
      ...next.metadata,
      annotations: { ...next.metadata?.annotations, [ANN_STORAGE_PROVISIONER]: provisioner },
    };
    return this.deps.writeClaim(next);
  }

  /** 1.21 `provisionClaimOperationExternal`: the annotation tells the external provisioner to start. */
  private async provisionExternal(c: PersistentVolumeClaim, provisioner: string): Promise<void> {
    const claim = await this.setClaimProvisioner(c, provisioner);
    this.ctx.recorder.event(
      claim,
      'Normal',
      'ExternalProvisioning',
      `waiting for a volume to be created, either by external provisioner "${provisioner}" or manually created by system administrator`,
    );
  }

  /** 1.21 `provisionClaimOperation` for the host-path plugin. */
  private async provisionInTree(c: PersistentVolumeClaim, cls: StorageClass): Promise<void> {
    const clsName = cls.metadata?.name ?? '';
    if (c.spec?.dataSource) {
      this.failed(
        c,
        `plugin "${HOST_PATH_PLUGIN}" is not a CSI plugin. Only CSI plugin can provision a claim with a datasource`,
      );
      return;
    }
    const claim = await this.setClaimProvisioner(c, cls.provisioner);
    const pvName = provisionedVolumeName(claim);
    const volumes = this.ctx.client.resource(PersistentVolumeKind);
    try {
      await volumes.get(pvName, { signal: this.ctx.signal });
      return; // made by an earlier attempt
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (cls.mountOptions?.length) {
      this.failed(
        claim,
        `Mount options are not supported by the provisioner but StorageClass "${clsName}" has mount options ${goList(cls.mountOptions)}`,
      );
      return;
    }
    if (!this.o.enableHostPathProvisioner) {
      this.failed(
        claim,
        `Failed to create provisioner: Provisioning in volume plugin "${HOST_PATH_PLUGIN}" is disabled`,
      );
      return;
    }
    let node: Node | undefined;
    const nodeName = claim.metadata?.annotations?.[ANN_SELECTED_NODE];
    if (nodeName !== undefined) {
      try {
        node = await this.ctx.client.resource(NodeKind).get(nodeName, { signal: this.ctx.signal });
      } catch (err) {
        if (!isNotFound(err)) throw err;
        this.failed(claim, `Failed to get target node: node "${nodeName}" not found`);
        return;
      }
    }
    let pv: PersistentVolume;
    try {
      pv = await provisionHostPath(pvName, claim, cls, this.o.hostPathRoot, node);
    } catch (err) {
      await this.rescheduleProvisioning(claim);
      this.failed(claim, `Failed to provision volume with StorageClass "${clsName}": ${(err as Error).message}`);
      return;
    }
    try {
      this.deps.rememberVolume(await volumes.create(pv, { signal: this.ctx.signal }));
    } catch (err) {
      if (!isAlreadyExists(err)) {
        // A directory without its volume object: remove it, and let the next sync try again.
        const key = `${claim.metadata?.namespace}/${claim.metadata?.name}`;
        this.failed(
          claim,
          `Error creating provisioned PV object for claim ${key}: ${(err as Error).message}. Deleting the volume.`,
        );
        await deleteHostPath(pv, this.o.hostPathRoot).catch((e: unknown) =>
          this.ctx.recorder.event(
            claim,
            'Warning',
            'ProvisioningCleanupFailed',
            `Error cleaning provisioned volume for claim ${key}: ${(e as Error).message}. Please delete manually.`,
          ),
        );
        throw err;
      }
    }
    this.ctx.recorder.event(
      claim,
      'Normal',
      'ProvisioningSucceeded',
      `Successfully provisioned volume ${pvName} using ${HOST_PATH_PLUGIN}`,
    );
  }

  /**
   * Provisioning on the node the scheduler chose failed: removing `volume.kubernetes.io/selected-node` tells the
   * scheduler to choose again (1.21 `rescheduleProvisioning`).
   */
  private async rescheduleProvisioning(c: PersistentVolumeClaim): Promise<void> {
    if (c.metadata?.annotations?.[ANN_SELECTED_NODE] === undefined) return;
    const next = structuredClone(c);
    delete next.metadata!.annotations![ANN_SELECTED_NODE];
    try {
      await this.deps.writeClaim(next);
    } catch (err) {
      this.ctx.logger.info('Failed to remove the selected node of a claim', {
        claim: `${c.metadata?.namespace}/${c.metadata?.name}`,
        error: String(err),
      });
    }
  }
}
