/** AlwaysDeny (for tests): refuses every create, update, delete and connect with 403. */
import { type AdmissionAttributes, type AdmissionPlugin, admissionForbidden, type PluginFactory } from '../interfaces';

export const NAME = 'AlwaysDeny';

/** Refuses everything. */
export class AlwaysDenyPlugin implements AdmissionPlugin {
  readonly name = NAME;
  handles(): boolean {
    return true;
  }
  async admit(a: AdmissionAttributes): Promise<void> {
    throw admissionForbidden(a, 'admission control is denying all modifications');
  }
  async validate(a: AdmissionAttributes): Promise<void> {
    throw admissionForbidden(a, 'admission control is denying all modifications');
  }
}

export const factory: PluginFactory = () => new AlwaysDenyPlugin();
