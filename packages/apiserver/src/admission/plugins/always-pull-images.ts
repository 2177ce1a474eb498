/**
 * AlwaysPullImages: every container of a new or updated pod pulls its image (`imagePullPolicy: Always`), so a pod
 * cannot use an image another tenant's credentials pulled onto the node. Validation refuses any other policy (403).
 */
import { field, fieldErrorToString, FieldPath } from '@platform/api';

import {
  type AdmissionAttributes,
  type AdmissionPlugin,
  admissionForbidden,
  type Operation,
  type PluginFactory,
} from '../interfaces';
import { allContainers, isPod, podOf } from './util';

export const NAME = 'AlwaysPullImages';

/** The AlwaysPullImages plugin. */
export class AlwaysPullImagesPlugin implements AdmissionPlugin {
  readonly name = NAME;

  handles(op: Operation): boolean {
    return op === 'CREATE' || op === 'UPDATE';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    const pod = isPod(a) ? podOf(a) : undefined;
    if (!pod) return;
    for (const c of allContainers(pod)) c.imagePullPolicy = 'Always';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const pod = isPod(a) ? podOf(a) : undefined;
    if (!pod?.spec) return;
    const errs = [];
    for (const [list, items] of [
      ['initContainers', pod.spec.initContainers],
      ['containers', pod.spec.containers],
      ['ephemeralContainers', pod.spec.ephemeralContainers],
    ] as const) {
      for (const [i, c] of (items ?? []).entries()) {
        if (c.imagePullPolicy !== 'Always') {
          errs.push(
            field.notSupported(new FieldPath('spec', list).index(i).child('imagePullPolicy'), c.imagePullPolicy, [
              'Always',
            ]),
          );
        }
      }
    }
    if (errs.length === 1) throw admissionForbidden(a, fieldErrorToString(errs[0] as (typeof errs)[number]));
    if (errs.length > 1) throw admissionForbidden(a, `[${errs.map((e) => fieldErrorToString(e)).join(', ')}]`);
  }
}

export const factory: PluginFactory = () => new AlwaysPullImagesPlugin();
