/**
 * NamespaceAutoProvision: a create in a namespace that does not exist creates the namespace first (never for a
 * dry-run, which must have no side effects).
 */
import { isAlreadyExists } from '@platform/api';

import { type InternalClient } from '../internal-client';
import { type AdmissionAttributes, type AdmissionPlugin, type Operation, type PluginFactory } from '../interfaces';
import { getNamespace } from './util';

export const NAME = 'NamespaceAutoProvision';

/** The NamespaceAutoProvision plugin. */
export class NamespaceAutoProvisionPlugin implements AdmissionPlugin {
  readonly name = NAME;
  constructor(private readonly client: InternalClient) {}

  handles(op: Operation): boolean {
    return op === 'CREATE';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (!a.namespace || a.dryRun || (a.resource.group === '' && a.resource.resource === 'namespaces')) return;
    if (await getNamespace(this.client, a.namespace)) return;
    try {
      await this.client.create({ group: '', resource: 'namespaces' }, '', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: a.namespace },
      });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
}

export const factory: PluginFactory = (c) => new NamespaceAutoProvisionPlugin(c.client);
