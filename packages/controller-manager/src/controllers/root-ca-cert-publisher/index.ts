/**
 * The root CA publisher (model: Kubernetes 1.21 `pkg/controller/certificates/rootcacertpublisher/publisher.go`):
 * every namespace gets the ConfigMap `kube-root-ca.crt` holding the cluster's root CA under `ca.crt`, kept as it
 * should be when it is changed or deleted. The ServiceAccount admission plugin projects it into every pod (the
 * `kube-api-access-*` volume), and the node agent does not start a pod until it can mount it.
 *
 * The CA is `--root-ca-file` when set, else the CA of the controller manager's client configuration.
 */
import { readFileSync } from 'node:fs';

import {
  type ApiObject,
  type ConfigMap,
  ConfigMapKind,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isNotFound,
  NamespaceKind,
} from '@platform/api';
import { type FlagDef, stringFlag } from '@platform/common';
import { runWorkers, WorkQueue } from '@platform/client';

import { type ControllerContext, type ControllerDefinition, ControllerOptions } from '../../controller';
import { unwrapTombstone } from '../util/informers';
import { waitForSynced } from '../util/wait-synced';

/** The ConfigMap every namespace gets (the name the ServiceAccount admission plugin projects). */
export const ROOT_CA_CONFIG_MAP = 'kube-root-ca.crt';
const DATA_KEY = 'ca.crt';

/** The values of the publisher's options. */
export interface RootCAPublisherConfig {
  /** `--root-ca-file`: a PEM file of the root CA; empty: the client configuration's CA. */
  rootCAFile: string;
}

/** `--root-ca-file`. */
export class RootCAPublisherOptions extends ControllerOptions<RootCAPublisherConfig> {
  rootCAFile = '';

  constructor() {
    super('Root CA publisher controller');
  }

  protected flagDefs(): FlagDef[] {
    return [
      stringFlag(
        'root-ca-file',
        'If set, this root certificate authority will be included in service account token secrets and in the kube-root-ca.crt ConfigMap of every namespace. This must be a valid PEM-encoded CA bundle.',
        this.rootCAFile,
        (v) => (this.rootCAFile = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    if (!this.rootCAFile) return [];
    try {
      const pem = readFileSync(this.rootCAFile, 'utf8');
      if (!pem.includes('-----BEGIN CERTIFICATE-----'))
        return [new Error(`--root-ca-file: ${this.rootCAFile} holds no PEM certificate`)];
    } catch (err) {
      return [new Error(`--root-ca-file: cannot read ${this.rootCAFile}: ${(err as Error).message}`)];
    }
    return [];
  }

  values(): RootCAPublisherConfig {
    return { rootCAFile: this.rootCAFile };
  }
}

async function run(ctx: ControllerContext, o: RootCAPublisherConfig): Promise<void> {
  const ca = o.rootCAFile ? readFileSync(o.rootCAFile, 'utf8') : ctx.rootCA?.toString('utf8');
  const namespaces = ctx.informers.informerFor(NamespaceKind);
  const configMaps = ctx.informers.informerFor(ConfigMapKind);
  if (!ca) {
    ctx.logger.warn('No root CA to publish: neither --root-ca-file nor a CA in the client configuration');
    ctx.setHealth(undefined);
    await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
    return;
  }
  const queue = new WorkQueue<string>({ name: 'root_ca_cert_publisher', metrics: ctx.metrics });
  ctx.signal.addEventListener('abort', () => queue.shutDown(), { once: true });
  namespaces.addEventHandler({
    onAdd: (n) => queue.add(n.metadata?.name ?? ''),
    onUpdate: (_old, n) => queue.add(n.metadata?.name ?? ''),
  });
  const onConfigMap = (cm: ApiObject): void => {
    if (cm.metadata?.name === ROOT_CA_CONFIG_MAP) queue.add(cm.metadata.namespace ?? '');
  };
  configMaps.addEventHandler({
    onUpdate: (_old, cm) => onConfigMap(cm),
    onDelete: (cm) => onConfigMap(unwrapTombstone(cm)),
  });

  const sync = async (ns: string): Promise<void> => {
    const n = namespaces.indexer.get(ns);
    if (!n || n.metadata?.deletionTimestamp || n.status?.phase === 'Terminating') return;
    const client = ctx.client.resource(ConfigMapKind, ns);
    const cur: ConfigMap | undefined = configMaps.indexer.get(`${ns}/${ROOT_CA_CONFIG_MAP}`);
    try {
      if (!cur) {
        await client.create(
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: ROOT_CA_CONFIG_MAP, namespace: ns },
            data: { [DATA_KEY]: ca },
          },
          { signal: ctx.signal },
        );
        return;
      }
      const data = cur.data ?? {};
      if (data[DATA_KEY] === ca && Object.keys(data).length === 1) return;
      // Only the CA: other keys a user added are dropped, as 1.21 does.
      await client.update({ ...cur, data: { [DATA_KEY]: ca } }, { signal: ctx.signal });
    } catch (err) {
      // Already there (the cache lags; its event brings it back), a namespace that went or is terminating.
      if (isAlreadyExists(err) || isNotFound(err) || isForbidden(err)) return;
      if (isConflict(err)) throw err; // retried with back-off, on the newer object
      throw err;
    }
  };

  if (!(await waitForSynced(ctx.signal, [namespaces, configMaps]))) return;
  await runWorkers(queue, 1, sync, (ns, err) => {
    if (!ctx.signal.aborted) ctx.logger.warn('Could not publish the root CA', { namespace: ns, error: String(err) });
  });
}

/** The `root-ca-cert-publisher` controller. */
export const rootCACertPublisherController: ControllerDefinition<RootCAPublisherConfig> = {
  name: 'root-ca-cert-publisher',
  enabledByDefault: true,
  serviceAccount: 'root-ca-cert-publisher',
  options: () => new RootCAPublisherOptions(),
  run,
};
