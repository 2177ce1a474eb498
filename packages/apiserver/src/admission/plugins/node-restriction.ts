/**
 * NodeRestriction (model: Kubernetes 1.21 `plugin/pkg/admission/noderestriction`): a node agent
 * (`system:node:<name>` in group `system:nodes`) may only
 * - create mirror pods bound to itself that use no service account and reference no secrets, config maps or
 *   claims, delete pods bound to itself, update the status of those pods, and evict them;
 * - create, update and delete its own Node, without changing its taints on update, and without setting labels of
 *   the restricted domains (`kubernetes.io`, `k8s.io`, `platform` and their subdomains) other than the well-known
 *   node labels and the `kubelet.kubernetes.io/` and `node.kubernetes.io/` prefixes; `node-restriction.*` labels
 *   are never its to set;
 * - write its own Lease in `node-lease`.
 * Requests from other users pass untouched.
 */
import { type Lease, type Node, type Pod } from '@platform/api';

import { type InternalClient } from '../internal-client';
import {
  type AdmissionAttributes,
  type AdmissionPlugin,
  admissionForbidden,
  type Operation,
  type PluginFactory,
} from '../interfaces';
import { annotation, MIRROR_POD_ANNOTATION } from './util';

export const NAME = 'NodeRestriction';

const NODE_USER_PREFIX = 'system:node:';
const NODES_GROUP = 'system:nodes';
const NODE_LEASE_NAMESPACE = 'node-lease';

/** Labels a node may always set on itself (the node agent's own). */
const ALLOWED_LABELS = new Set([
  'kubernetes.io/hostname',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'topology.kubernetes.io/zone',
]);
const ALLOWED_PREFIX_DOMAINS = ['kubelet.kubernetes.io', 'node.kubernetes.io', 'agent.platform', 'node.platform'];
const RESTRICTED_DOMAINS = ['kubernetes.io', 'k8s.io', 'platform'];

function domainOf(key: string): string | undefined {
  const i = key.indexOf('/');
  return i < 0 ? undefined : key.slice(0, i);
}

function inDomain(domain: string, base: string): boolean {
  return domain === base || domain.endsWith(`.${base}`);
}

/** Whether a node may set label `key` on itself. */
export function nodeMaySetLabel(key: string): boolean {
  const domain = domainOf(key);
  if (!domain) return true;
  if (domain.startsWith('node-restriction.')) return false;
  if (ALLOWED_LABELS.has(key)) return true;
  if (ALLOWED_PREFIX_DOMAINS.some((d) => inDomain(domain, d))) return true;
  return !RESTRICTED_DOMAINS.some((d) => inDomain(domain, d));
}

/** The node name of a node agent user, or undefined for anyone else. */
export function nodeNameOf(a: AdmissionAttributes): string | undefined {
  const u = a.user;
  if (!u || !u.name.startsWith(NODE_USER_PREFIX) || !u.groups.includes(NODES_GROUP)) return undefined;
  return u.name.slice(NODE_USER_PREFIX.length) || undefined;
}

/** The NodeRestriction plugin. */
export class NodeRestrictionPlugin implements AdmissionPlugin {
  readonly name = NAME;
  constructor(private readonly client: InternalClient) {}

  handles(op: Operation): boolean {
    return op !== 'CONNECT';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    const node = nodeNameOf(a);
    if (node === undefined || a.resource.group !== '') {
      if (node !== undefined && a.resource.group === 'coordination.platform' && a.resource.resource === 'leases') {
        this.lease(a, node);
      }
      return;
    }
    if (a.resource.resource === 'pods') await this.pod(a, node);
    else if (a.resource.resource === 'nodes') this.node(a, node);
  }

  private lease(a: AdmissionAttributes, node: string): void {
    if (a.namespace !== NODE_LEASE_NAMESPACE || a.name !== node) {
      throw admissionForbidden(a, `can only access node lease with the same name as the requesting node`);
    }
    const lease = a.object as Lease | undefined;
    if (lease?.metadata?.name && lease.metadata.name !== node) {
      throw admissionForbidden(a, `can only access node lease with the same name as the requesting node`);
    }
  }

  private async pod(a: AdmissionAttributes, node: string): Promise<void> {
    const no = (detail: string): never => {
      throw admissionForbidden(a, detail);
    };
    switch (a.subresource) {
      case '':
        if (a.operation === 'CREATE') {
          const pod = a.object as Pod;
          if (annotation(pod, MIRROR_POD_ANNOTATION) === undefined)
            no(`pod does not have "${MIRROR_POD_ANNOTATION}" annotation, node "${node}" can only create mirror pods`);
          if (pod.spec?.nodeName !== node) no(`node "${node}" can only create pods with spec.nodeName set to itself`);
          if (pod.spec?.serviceAccountName) no(`node "${node}" can not create pods that reference a service account`);
          for (const v of pod.spec?.volumes ?? []) {
            if (v.secret) no(`node "${node}" can not create pods that reference secrets`);
            if (v.configMap) no(`node "${node}" can not create pods that reference configmaps`);
            if (v.persistentVolumeClaim) no(`node "${node}" can not create pods that reference persistentvolumeclaims`);
          }
          return;
        }
        if (a.operation === 'DELETE') {
          if (!a.name) no(`node "${node}" can only delete pods with spec.nodeName set to itself`);
          const pod = (a.oldObject ?? (await this.client.get({ group: '', resource: 'pods' }, a.namespace, a.name))) as
            Pod | undefined;
          if (pod && pod.spec?.nodeName !== node)
            no(`node "${node}" can only delete pods with spec.nodeName set to itself`);
          return;
        }
        return no(`node "${node}" can only update pod status`);
      case 'status': {
        const pod = (a.oldObject ?? a.object) as Pod | undefined;
        if (pod?.spec?.nodeName !== node)
          no(`node "${node}" can only update pod status for pods with spec.nodeName set to itself`);
        return;
      }
      case 'eviction': {
        const pod = (await this.client.get({ group: '', resource: 'pods' }, a.namespace, a.name)) as Pod | undefined;
        if (pod && pod.spec?.nodeName !== node)
          no(`node "${node}" can only evict pods with spec.nodeName set to itself`);
        return;
      }
      default:
        return no(`node "${node}" can not ${a.operation.toLowerCase()} pods/${a.subresource}`);
    }
  }

  private node(a: AdmissionAttributes, node: string): void {
    if (a.name !== node) throw admissionForbidden(a, `node "${node}" is not allowed to modify node "${a.name}"`);
    if (a.subresource !== '' || a.operation === 'DELETE') return;
    const obj = a.object as Node | undefined;
    const old = a.oldObject as Node | undefined;
    const labels = obj?.metadata?.labels ?? {};
    const before = old?.metadata?.labels ?? {};
    const bad = Object.keys(labels).filter(
      (k) => (a.operation === 'CREATE' || before[k] !== labels[k]) && !nodeMaySetLabel(k),
    );
    const removed =
      a.operation === 'UPDATE' ? Object.keys(before).filter((k) => !(k in labels) && !nodeMaySetLabel(k)) : [];
    if (bad.length || removed.length) {
      throw admissionForbidden(a, `is not allowed to modify labels: ${[...bad, ...removed].sort().join(', ')}`);
    }
    if (
      a.operation === 'UPDATE' &&
      JSON.stringify(obj?.spec?.taints ?? []) !== JSON.stringify(old?.spec?.taints ?? [])
    ) {
      throw admissionForbidden(a, `node "${node}" is not allowed to modify taints`);
    }
  }
}

export const factory: PluginFactory = (c) => new NodeRestrictionPlugin(c.client);
