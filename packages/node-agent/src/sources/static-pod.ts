/**
 * Static pods: pods read from manifest files or a URL rather than the API (model: kubelet `config/common.go`). Each
 * gets the identity the kubelet gives it — name `<name>-<node>`, namespace `default` when unset, `spec.nodeName`, a
 * uid that is a hash of its content, source and node, and the `kubernetes.io/config.*` annotations — and the
 * defaults the API server would have set.
 */
import { createHash } from 'node:crypto';

import { type Pod } from '@platform/api';
import { loadAll } from 'js-yaml';

/** Annotation: the content hash of a static pod (also its uid). */
export const CONFIG_HASH_ANNOTATION = 'kubernetes.io/config.hash';
/** Annotation: where a pod came from (`file`, `http`, `api`). */
export const CONFIG_SOURCE_ANNOTATION = 'kubernetes.io/config.source';
/** Annotation: when the agent first saw the pod. */
export const CONFIG_SEEN_ANNOTATION = 'kubernetes.io/config.seen';
/** Annotation of a mirror pod: the static pod's hash. */
export const CONFIG_MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

/** Whether an API pod is a mirror pod. */
export function isMirrorPod(pod: Pod): boolean {
  return pod.metadata?.annotations?.[CONFIG_MIRROR_ANNOTATION] !== undefined;
}

/** Whether a pod came from a file or URL. */
export function isStaticPod(pod: Pod): boolean {
  const s = pod.metadata?.annotations?.[CONFIG_SOURCE_ANNOTATION];
  return s === 'file' || s === 'http';
}

/** Parses manifest text (YAML or JSON; one pod, several documents, or a PodList) into pods. */
export function parseManifests(text: string): Pod[] {
  const docs = loadAll(text) as unknown[];
  const out: Pod[] = [];
  for (const d of docs) {
    if (!d || typeof d !== 'object') continue;
    const o = d as { kind?: string; items?: unknown[] };
    if (o.kind === 'PodList' && Array.isArray(o.items)) out.push(...(o.items as Pod[]));
    else if (o.kind === 'Pod' || o.kind === undefined) out.push(d as Pod);
    else throw new Error(`manifest of kind ${o.kind}: want Pod or PodList`);
  }
  return out;
}

/** Gives a manifest pod its static identity and defaults (model: `applyDefaults` in `config/common.go`). */
export function staticPod(manifest: Pod, source: 'file' | 'http', nodeName: string): Pod {
  const pod = structuredClone(manifest);
  if (!pod.metadata?.name) throw new Error('static pod manifest without metadata.name');
  const spec = pod.spec;
  if (!spec || !Array.isArray(spec.containers) || spec.containers.length === 0)
    throw new Error(`static pod ${pod.metadata.name}: spec.containers is required`);
  const hash = createHash('md5').update(JSON.stringify(manifest)).update(source).update(nodeName).digest('hex');
  pod.metadata = {
    ...pod.metadata,
    name: `${pod.metadata.name}-${nodeName}`,
    namespace: pod.metadata.namespace || 'default',
    uid: hash,
    annotations: {
      ...(pod.metadata.annotations ?? {}),
      [CONFIG_HASH_ANNOTATION]: hash,
      [CONFIG_SOURCE_ANNOTATION]: source,
      [CONFIG_SEEN_ANNOTATION]: new Date().toISOString(),
    },
  };
  spec.nodeName = nodeName;
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.schedulerName ??= 'default-scheduler';
  spec.tolerations = [...(spec.tolerations ?? []), { operator: 'Exists', effect: 'NoExecute' }];
  for (const c of [...spec.containers, ...(spec.initContainers ?? [])]) {
    c.imagePullPolicy ??= c.image?.endsWith(':latest') || !c.image?.includes(':') ? 'Always' : 'IfNotPresent';
    c.terminationMessagePath ??= '/dev/termination-log';
    c.terminationMessagePolicy ??= 'File';
  }
  pod.status = { phase: 'Pending' };
  return pod;
}
