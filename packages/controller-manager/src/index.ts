/** @platform/controller-manager — the controller manager: one folder per controller under controllers/, each on shared informers and a rate-limited work queue. */
import { describeFlags, type ReferencePage } from '@platform/common';

import { controllerManagerCommand } from './cmd/main';

export { main, controllerManagerCommand } from './cmd/main';
export { CONTROLLERS } from './controllers';
export { type ControllerContext, type ControllerDefinition, ControllerOptions } from './controller';
export { startControllers, type ControllerManagerConfig, type RunningControllers } from './controller-manager';

/** The options reference of `platform-controller-manager` (docs/reference/controller-manager.md), from `--help`'s definitions. */
export function referencePages(): ReferencePage[] {
  return [
    {
      file: 'controller-manager.md',
      title: 'platform-controller-manager',
      intro: [
        'The controller manager runs the control loops that move the cluster toward the state its objects declare: ReplicaSets, ReplicationControllers and Deployments get their pods, namespaces their default ServiceAccount, aggregated ClusterRoles their rules, and so on for every controller of `--controllers`.',
        '',
        'It runs them only while it holds the `controller-manager` Lease in `system` (with `--leader-elect`, the default), and exits when it loses it. Options of controllers this process does not run yet are accepted, type-checked and named in a warning at start; naming such a controller in `--controllers` is a warning too, an unknown name an error.',
      ].join('\n'),
      sections: () => describeFlags(controllerManagerCommand().cmd),
    },
  ];
}
