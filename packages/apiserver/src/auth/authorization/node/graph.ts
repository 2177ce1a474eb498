/**
 * The node graph (model: Kubernetes 1.21 `plugin/pkg/auth/authorizer/node/graph.go`, `graph_populator.go`): which
 * node each pod is bound to, and which secrets, config maps, persistent volume claims and service accounts those
 * pods reference; which persistent volume each claim's volume is (from the PVs' claimRef). Fed by the watches of
 * pods and persistent volumes; questions are answered from memory.
 *
 * What a pod references: volumes (secret, configMap, projected sources, persistentVolumeClaim, ephemeral claims
 * `<pod>-<volume>`, the secretRefs of CSI/flex/cephfs/rbd/iscsi/scaleIO/storageos/azureFile volumes), env and
 * envFrom of every container (init and ephemeral ones too), imagePullSecrets, and its service account.
 */
import { type ApiObject } from '@platform/api';

import { type ReflectHandler } from '../../authorizer';

/** The kinds of object a node may reach through its pods. */
export type ReferencedKind = 'secret' | 'configmap' | 'pvc' | 'serviceaccount';

interface PodRefs {
  node: string;
  refs: { kind: ReferencedKind; name: string }[];
}

/* eslint-disable @typescript-eslint/no-explicit-any -- pods are read loosely: any well-formed field is honoured */
type Loose = Record<string, any>;

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function arr(v: unknown): Loose[] {
  return Array.isArray(v) ? (v.filter((x) => x && typeof x === 'object') as Loose[]) : [];
}

/** Everything pod `pod` references (see the module comment). */
export function podReferences(pod: ApiObject): { kind: ReferencedKind; name: string }[] {
  const spec = ((pod as Loose).spec ?? {}) as Loose;
  const out: { kind: ReferencedKind; name: string }[] = [];
  const add = (kind: ReferencedKind, name: unknown): void => {
    const n = str(name);
    if (n) out.push({ kind, name: n });
  };
  add('serviceaccount', spec.serviceAccountName ?? spec.serviceAccount ?? 'default');
  for (const s of arr(spec.imagePullSecrets)) add('secret', s.name);
  for (const v of arr(spec.volumes)) {
    if (v.secret) add('secret', v.secret.secretName);
    if (v.configMap) add('configmap', v.configMap.name);
    if (v.persistentVolumeClaim) add('pvc', v.persistentVolumeClaim.claimName);
    if (v.ephemeral) add('pvc', `${pod.metadata?.name ?? ''}-${v.name ?? ''}`);
    for (const src of arr(v.projected?.sources)) {
      if (src.secret) add('secret', src.secret.name);
      if (src.configMap) add('configmap', src.configMap.name);
    }
    for (const k of ['csi', 'flexVolume', 'cephfs', 'rbd', 'iscsi', 'scaleIO', 'storageos', 'cinder']) {
      const ref = v[k]?.secretRef ?? v[k]?.nodePublishSecretRef;
      if (ref) add('secret', ref.name);
    }
    if (v.azureFile) add('secret', v.azureFile.secretName);
  }
  const containers = [...arr(spec.initContainers), ...arr(spec.containers), ...arr(spec.ephemeralContainers)];
  for (const c of containers) {
    for (const e of arr(c.envFrom)) {
      if (e.secretRef) add('secret', e.secretRef.name);
      if (e.configMapRef) add('configmap', e.configMapRef.name);
    }
    for (const e of arr(c.env)) {
      if (e.valueFrom?.secretKeyRef) add('secret', e.valueFrom.secretKeyRef.name);
      if (e.valueFrom?.configMapKeyRef) add('configmap', e.valueFrom.configMapKeyRef.name);
    }
  }
  return out;
}

function keyOf(obj: ApiObject): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}

/** See the module comment. */
export class NodeGraph {
  /** Pod key → its node and references (bound pods only). */
  private readonly pods = new Map<string, PodRefs>();
  /** `<kind>/<namespace>/<name>` → node → number of that node's pods referencing it. */
  private readonly reachable = new Map<string, Map<string, number>>();
  /** PV name → `<namespace>/<claim>` of its claimRef. */
  private readonly pvClaims = new Map<string, string>();

  /** The feed of the pods watch. */
  readonly podHandler: ReflectHandler = {
    replace: (objects) => {
      this.pods.clear();
      this.reachable.clear();
      for (const o of objects) this.setPod(o);
    },
    upsert: (obj) => this.setPod(obj),
    remove: (obj) => this.removePod(keyOf(obj)),
  };

  /** The feed of the persistent volumes watch. */
  readonly pvHandler: ReflectHandler = {
    replace: (objects) => {
      this.pvClaims.clear();
      for (const o of objects) this.setPV(o);
    },
    upsert: (obj) => this.setPV(obj),
    remove: (obj) => this.pvClaims.delete(obj.metadata?.name ?? ''),
  };

  private setPV(pv: ApiObject): void {
    const ref = ((pv as Loose).spec?.claimRef ?? undefined) as Loose | undefined;
    const name = pv.metadata?.name ?? '';
    if (ref && str(ref.name)) this.pvClaims.set(name, `${str(ref.namespace) ?? ''}/${ref.name as string}`);
    else this.pvClaims.delete(name);
  }

  private count(ref: string, node: string, delta: number): void {
    let byNode = this.reachable.get(ref);
    if (!byNode) {
      if (delta < 0) return;
      byNode = new Map();
      this.reachable.set(ref, byNode);
    }
    const n = (byNode.get(node) ?? 0) + delta;
    if (n > 0) byNode.set(node, n);
    else byNode.delete(node);
    if (byNode.size === 0) this.reachable.delete(ref);
  }

  private removePod(key: string): void {
    const old = this.pods.get(key);
    if (!old) return;
    const ns = key.slice(0, key.indexOf('/'));
    for (const r of old.refs) this.count(`${r.kind}/${ns}/${r.name}`, old.node, -1);
    this.pods.delete(key);
  }

  private setPod(pod: ApiObject): void {
    const key = keyOf(pod);
    this.removePod(key);
    const node = str((pod as Loose).spec?.nodeName);
    if (!node) return;
    const refs = podReferences(pod);
    const ns = pod.metadata?.namespace ?? '';
    for (const r of refs) this.count(`${r.kind}/${ns}/${r.name}`, node, 1);
    this.pods.set(key, { node, refs });
  }

  /** The node pod `namespace`/`name` is bound to, if any. */
  nodeOfPod(namespace: string, name: string): string | undefined {
    return this.pods.get(`${namespace}/${name}`)?.node;
  }

  /** Whether a pod bound to `node` references the object. */
  references(node: string, kind: ReferencedKind, namespace: string, name: string): boolean {
    return this.reachable.get(`${kind}/${namespace}/${name}`)?.has(node) === true;
  }

  /** Whether persistent volume `name` is the volume of a claim a pod bound to `node` references. */
  reachesPV(node: string, name: string): boolean {
    const claim = this.pvClaims.get(name);
    if (!claim) return false;
    const slash = claim.indexOf('/');
    return this.references(node, 'pvc', claim.slice(0, slash), claim.slice(slash + 1));
  }
}
