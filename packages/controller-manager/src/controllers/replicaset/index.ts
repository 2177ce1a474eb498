/** The `replicaset` controller: keeps each ReplicaSet's pods at `spec.replicas`. */
import { ReplicaSetKind, type Kind } from '@platform/api';

import { type ControllerDefinition } from '../../controller';
import { ConcurrentSyncsOptions } from '../util/options';
import { replicaSetSelector, runReplicatedController } from './replica-set-controller';

export * from './replica-set-controller';

/** The definition `controllers/index.ts` lists. */
export const replicaSetController: ControllerDefinition<{ workers: number }> = {
  name: 'replicaset',
  enabledByDefault: true,
  options: () => new ConcurrentSyncsOptions('ReplicaSet controller', 'concurrent-replicaset-syncs', 5, 'replica sets'),
  run: (ctx, o) =>
    runReplicatedController(
      ctx,
      { name: 'replicaset', kind: ReplicaSetKind as unknown as Kind, selector: replicaSetSelector },
      o.workers,
    ),
};
