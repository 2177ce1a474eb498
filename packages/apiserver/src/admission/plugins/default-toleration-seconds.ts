/**
 * DefaultTolerationSeconds (model: Kubernetes 1.21 `plugin/pkg/admission/defaulttolerationseconds`): a new pod
 * that does not tolerate the `node.kubernetes.io/not-ready` and `node.kubernetes.io/unreachable` NoExecute taints
 * gets tolerations of them for `--default-not-ready-toleration-seconds` and
 * `--default-unreachable-toleration-seconds` (300 each), so its node's failure evicts it after that time.
 */
import { type Toleration } from '@platform/api';

import { type AdmissionAttributes, type AdmissionPlugin, type Operation, type PluginFactory } from '../interfaces';
import { isPod, podOf } from './util';

export const NAME = 'DefaultTolerationSeconds';

/** The taint a node has while it is not ready. */
export const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';
/** The taint a node has while the node controller cannot reach it. */
export const UNREACHABLE_TAINT = 'node.kubernetes.io/unreachable';

function tolerates(tolerations: Toleration[], key: string): boolean {
  return tolerations.some(
    (t) => (t.effect === undefined || t.effect === '' || t.effect === 'NoExecute') && (t.key === key || !t.key),
  );
}

/** The DefaultTolerationSeconds plugin. */
export class DefaultTolerationSecondsPlugin implements AdmissionPlugin {
  readonly name = NAME;
  constructor(
    private readonly notReadySeconds: number,
    private readonly unreachableSeconds: number,
  ) {}

  handles(op: Operation): boolean {
    return op === 'CREATE';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (!isPod(a)) return;
    const pod = podOf(a);
    if (!pod?.spec) return;
    const tolerations = (pod.spec.tolerations ??= []);
    if (!tolerates(tolerations, NOT_READY_TAINT)) {
      tolerations.push({
        key: NOT_READY_TAINT,
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: this.notReadySeconds,
      });
    }
    if (!tolerates(tolerations, UNREACHABLE_TAINT)) {
      tolerations.push({
        key: UNREACHABLE_TAINT,
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: this.unreachableSeconds,
      });
    }
  }
}

export const factory: PluginFactory = (c) =>
  new DefaultTolerationSecondsPlugin(
    c.settings.defaultNotReadyTolerationSeconds,
    c.settings.defaultUnreachableTolerationSeconds,
  );
