/**
 * NamespaceLifecycle (model: apiserver `plugin/namespace/lifecycle`): nothing new is created in a namespace that
 * does not exist (404) or is being terminated (403 with a NamespaceTerminating cause), and the system namespaces
 * (`default`, `system`, `public`) cannot be deleted. Reviews (`localsubjectaccessreviews`) need no namespace.
 */
import { type Namespace, StatusError } from '@platform/api';

import { type InternalClient } from '../internal-client';
import {
  type AdmissionAttributes,
  type AdmissionPlugin,
  admissionForbidden,
  type Operation,
  type PluginFactory,
} from '../interfaces';
import { mustGetNamespace } from './util';

export const NAME = 'NamespaceLifecycle';

/** Namespaces that can never be deleted. */
export const IMMORTAL_NAMESPACES = ['default', 'system', 'public'];

const NO_NAMESPACE_NEEDED = new Set(['authorization.platform/localsubjectaccessreviews']);

/** The NamespaceLifecycle plugin. */
export class NamespaceLifecyclePlugin implements AdmissionPlugin {
  readonly name = NAME;
  constructor(private readonly client: InternalClient) {}

  handles(op: Operation): boolean {
    return op === 'CREATE' || op === 'UPDATE' || op === 'DELETE';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.resource.group === '' && a.resource.resource === 'namespaces') {
      if (a.operation === 'DELETE' && IMMORTAL_NAMESPACES.includes(a.name)) {
        throw admissionForbidden(a, 'this namespace may not be deleted');
      }
      return;
    }
    if (!a.namespace || a.operation !== 'CREATE') return;
    if (NO_NAMESPACE_NEEDED.has(`${a.resource.group}/${a.resource.resource}`)) return;
    const ns = (await mustGetNamespace(this.client, a.namespace)) as Namespace;
    if (ns.status?.phase === 'Terminating' || ns.metadata?.deletionTimestamp) {
      const e = admissionForbidden(
        a,
        `unable to create new content in namespace ${a.namespace} because it is being terminated`,
      );
      throw new StatusError({
        ...e.status,
        details: {
          ...e.status.details,
          causes: [
            {
              reason: 'NamespaceTerminating',
              message: `namespace ${a.namespace} is being terminated`,
              field: 'metadata.namespace',
            },
          ],
        },
      });
    }
  }
}

export const factory: PluginFactory = (c) => new NamespaceLifecyclePlugin(c.client);
