/** The `deployment` controller: rolls Deployments out through ReplicaSets. */
import { durationFlag, type FlagDef, INT32, intFlag } from '@platform/common';

import { type ControllerDefinition, ControllerOptions } from '../../controller';
import { type DeploymentControllerOptions, runDeploymentController } from './deployment-controller';

export * from './deployment-controller';
export * from './util';

/** `--concurrent-deployment-syncs`, `--deployment-controller-sync-period`. */
export class DeploymentOptions extends ControllerOptions<DeploymentControllerOptions> {
  private workers = 5;
  private syncPeriodMs = 30_000;

  constructor() {
    super('Deployment controller');
  }

  protected flagDefs(): FlagDef[] {
    return [
      intFlag(
        'concurrent-deployment-syncs',
        'The number of deployment objects that are allowed to sync concurrently. Larger number = more responsive deployments, but more CPU (and network) load',
        this.workers,
        (v) => (this.workers = v),
        { range: INT32, type: 'int32' },
      ),
      durationFlag(
        'deployment-controller-sync-period',
        'Period for syncing the deployments.',
        this.syncPeriodMs,
        (v) => (this.syncPeriodMs = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    return this.workers < 1 ? [new Error(`--concurrent-deployment-syncs must be at least 1, got ${this.workers}`)] : [];
  }

  values(): DeploymentControllerOptions {
    return { workers: this.workers, syncPeriodMs: this.syncPeriodMs };
  }
}

/** The definition `controllers/index.ts` lists. */
export const deploymentController: ControllerDefinition<DeploymentControllerOptions> = {
  name: 'deployment',
  enabledByDefault: true,
  options: () => new DeploymentOptions(),
  run: runDeploymentController,
};
