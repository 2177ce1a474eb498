/** DefaultBinder (1.21 `defaultbinder`): POSTs a Binding to `pods/<name>/binding`. */
import { type Pod } from '@platform/api';

import {
  type BindPlugin,
  type CycleState,
  errorStatus,
  type FrameworkHandle,
  type PluginFactory,
  type Status,
} from '../../framework/types';

export const NAME = 'DefaultBinder';

export class DefaultBinder implements BindPlugin {
  readonly name = NAME;
  constructor(private readonly handle: FrameworkHandle) {}
  async bind(_s: CycleState, pod: Pod, nodeName: string): Promise<Status | undefined> {
    try {
      await this.handle.bind(pod, nodeName);
      return undefined;
    } catch (err) {
      return errorStatus(err);
    }
  }
}

export const factory: PluginFactory = (_args, handle) => new DefaultBinder(handle);
