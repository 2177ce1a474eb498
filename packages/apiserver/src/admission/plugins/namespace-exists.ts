/** NamespaceExists: creates, updates and deletes in a namespace that does not exist fail with 404 NotFound. */
import { type InternalClient } from '../internal-client';
import { type AdmissionAttributes, type AdmissionPlugin, type Operation, type PluginFactory } from '../interfaces';
import { mustGetNamespace } from './util';

export const NAME = 'NamespaceExists';

/** The NamespaceExists plugin. */
export class NamespaceExistsPlugin implements AdmissionPlugin {
  readonly name = NAME;
  constructor(private readonly client: InternalClient) {}

  handles(op: Operation): boolean {
    return op !== 'CONNECT';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!a.namespace || (a.resource.group === '' && a.resource.resource === 'namespaces')) return;
    await mustGetNamespace(this.client, a.namespace);
  }
}

export const factory: PluginFactory = (c) => new NamespaceExistsPlugin(c.client);
