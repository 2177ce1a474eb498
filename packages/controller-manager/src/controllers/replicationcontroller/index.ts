/**
 * The `replicationcontroller` controller: the ReplicaSet controller's code run on core/v1 ReplicationControllers
 * (model: `pkg/controller/replication`), whose selector is a label map.
 */
import { type Kind, ReplicationControllerKind } from '@platform/api';

import { type ControllerDefinition } from '../../controller';
import { replicationControllerSelector, runReplicatedController } from '../replicaset/replica-set-controller';
import { ConcurrentSyncsOptions } from '../util/options';

/** The definition `controllers/index.ts` lists. */
export const replicationControllerController: ControllerDefinition<{ workers: number }> = {
  name: 'replicationcontroller',
  enabledByDefault: true,
  serviceAccount: 'replication-controller',
  options: () =>
    new ConcurrentSyncsOptions('ReplicationController controller', 'concurrent-rc-syncs', 5, 'replication controllers'),
  run: (ctx, o) =>
    runReplicatedController(
      ctx,
      {
        name: 'replicationcontroller',
        kind: ReplicationControllerKind as unknown as Kind,
        selector: replicationControllerSelector,
      },
      o.workers,
    ),
};
