/** The shared parts of the apps/v1 workloads (conditions), with Kubernetes' `apps/v1/generated.proto` numbers. */
import { object, opt, req, t } from '../../../schema/schema';
import { schemaPrefix } from '../../../scheme/kind';

/** The schema id prefix of apps/v1. */
export const APPS_V1 = schemaPrefix('apps', 'v1');

/** A workload condition (`type`, `status`, `lastTransitionTime` = 3, `reason`, `message`) under its own name. */
export function workloadCondition(name: string): ReturnType<typeof conditionOf> {
  return conditionOf(name);
}

function conditionOf(name: string) {
  return object(`${APPS_V1}${name}`, {
    type: req(1, t.string(), 'Type of the condition.'),
    status: req(2, t.enumOf(['True', 'False', 'Unknown']), 'Status of the condition: True, False or Unknown.'),
    lastTransitionTime: opt(3, t.time(), 'Last time the condition transitioned from one status to another.'),
    reason: opt(4, t.string(), "The reason for the condition's last transition."),
    message: opt(5, t.string(), 'A human readable message indicating details about the transition.'),
  });
}
