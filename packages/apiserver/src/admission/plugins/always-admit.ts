/** AlwaysAdmit (deprecated in Kubernetes): admits every request. */
import { type AdmissionPlugin, type PluginFactory } from '../interfaces';

export const NAME = 'AlwaysAdmit';

/** Admits everything. */
export class AlwaysAdmitPlugin implements AdmissionPlugin {
  readonly name = NAME;
  handles(): boolean {
    return true;
  }
  async admit(): Promise<void> {}
  async validate(): Promise<void> {}
}

export const factory: PluginFactory = () => new AlwaysAdmitPlugin();
