/**
 * What a container gets from its pod spec (model: kubelet `kubelet_pods.go` `makeEnvironmentVariables`,
 * `kuberuntime_container.go` `generateContainerConfig`, and the volume plugins emptyDir, hostPath, configMap,
 * secret, downwardAPI and projected): its environment (ConfigMaps, Secrets, the downward API, `$(VAR)` expansion),
 * its volumes written under `<root>/pods/<uid>/volumes/`, and the runtime's `ContainerConfig`.
 */
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join } from 'node:path';

import { type Container, isNotFound, type Pod, type Volume } from '@platform/api';

import {
  ANNOTATION_CONTAINER_HASH,
  ANNOTATION_RESTART_COUNT,
  ANNOTATION_TERMINATION_GRACE,
  type ContainerConfig,
  LABEL_CONTAINER_NAME,
  LABEL_POD_NAME,
  LABEL_POD_NAMESPACE,
  LABEL_POD_UID,
  type Mount,
  type PodSandboxConfig,
} from '../runtime/runtime';
import { type ObjectCache } from './objects';

/** A problem of the pod's configuration that no retry fixes until the objects change (`CreateContainerConfigError`). */
export class ContainerConfigError extends Error {
  readonly isContainerConfigError = true;
}

/** Node facts the downward API and the sandbox need. */
export interface NodeFacts {
  nodeName: string;
  nodeIp: string;
  rootDir: string;
  clusterDns: string[];
  clusterDomain: string;
}

/** `$(VAR)` expansion of Kubernetes (`third_party/forked/golang/expansion`): `$$` escapes, unknown stays as is. */
export function expand(input: string, env: Map<string, string>): string {
  let out = '';
  for (let i = 0; i < input.length; i++) {
    const ch = input[i];
    if (ch === '$' && i + 1 < input.length) {
      const next = input[i + 1];
      if (next === '$') {
        out += '$';
        i++;
        continue;
      }
      if (next === '(') {
        const end = input.indexOf(')', i + 2);
        if (end > 0) {
          const name = input.slice(i + 2, end);
          const v = env.get(name);
          out += v !== undefined ? v : `$(${name})`;
          i = end;
          continue;
        }
      }
    }
    out += ch;
  }
  return out;
}

function podFieldValue(pod: Pod, path: string, facts: NodeFacts): string {
  const m = pod.metadata ?? {};
  const sub = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (sub) return (sub[1] === 'labels' ? m.labels : m.annotations)?.[sub[2]!] ?? '';
  switch (path) {
    case 'metadata.name':
      return m.name ?? '';
    case 'metadata.namespace':
      return m.namespace ?? '';
    case 'metadata.uid':
      return m.uid ?? '';
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? facts.nodeName;
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP':
      return facts.nodeIp;
    case 'status.podIP':
    case 'status.podIPs':
      return pod.status?.podIP ?? facts.nodeIp;
    case 'metadata.labels':
      return Object.entries(m.labels ?? {})
        .map(([k, v]) => `${k}="${v}"`)
        .sort()
        .join('\n');
    case 'metadata.annotations':
      return Object.entries(m.annotations ?? {})
        .map(([k, v]) => `${k}="${v}"`)
        .sort()
        .join('\n');
    default:
      throw new ContainerConfigError(`unsupported fieldRef ${path}`);
  }
}

function quantityNumber(q: string | undefined): number | undefined {
  if (q === undefined) return undefined;
  const m = /^([0-9.]+)([a-zA-Z]*)$/.exec(String(q));
  if (!m) return undefined;
  const n = Number(m[1]);
  const mult: Record<string, number> = {
    '': 1,
    m: 1e-3,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    Ki: 1024,
    Mi: 1024 ** 2,
    Gi: 1024 ** 3,
    Ti: 1024 ** 4,
  };
  return n * (mult[m[2]!] ?? 1);
}

function resourceFieldValue(
  c: Container | undefined,
  ref: { resource: string; divisor?: unknown },
  facts: NodeFacts,
): string {
  const [kind, res] = ref.resource.split('.') as [string, string];
  const list = (kind === 'limits' ? c?.resources?.limits : c?.resources?.requests) as
    Record<string, string> | undefined;
  let v = quantityNumber(list?.[res]);
  if (v === undefined && kind === 'limits') {
    // Limits default to the node's allocatable (as the kubelet does).
    v = res === 'cpu' ? cpus().length : res === 'memory' ? totalmem() : 0;
  }
  v ??= 0;
  const divisor = quantityNumber(ref.divisor as string | undefined) ?? 1;
  void facts;
  return String(Math.ceil(v / divisor));
}

/** The container's environment, in the order the kubelet builds it; throws ContainerConfigError for missing refs. */
export async function containerEnv(
  pod: Pod,
  c: Container,
  objects: ObjectCache,
  facts: NodeFacts,
): Promise<Array<{ key: string; value: string }>> {
  const ns = pod.metadata?.namespace ?? 'default';
  const env = new Map<string, string>();
  const fetch = async <T>(what: string, name: string, optional: boolean | undefined, f: () => Promise<T>) => {
    try {
      return await f();
    } catch (err) {
      if (isNotFound(err)) {
        if (optional) return undefined;
        throw new ContainerConfigError(`${what} "${name}" not found`);
      }
      throw err;
    }
  };
  for (const from of c.envFrom ?? []) {
    const prefix = from.prefix ?? '';
    if (from.configMapRef?.name) {
      const cm = await fetch('configmap', from.configMapRef.name, from.configMapRef.optional, () =>
        objects.configMap(ns, from.configMapRef!.name!),
      );
      for (const [k, v] of Object.entries(cm?.data ?? {})) env.set(prefix + k, v);
    }
    if (from.secretRef?.name) {
      const s = await fetch('secret', from.secretRef.name, from.secretRef.optional, () =>
        objects.secret(ns, from.secretRef!.name!),
      );
      for (const [k, v] of Object.entries(s?.data ?? {})) env.set(prefix + k, Buffer.from(v, 'base64').toString());
    }
  }
  for (const e of c.env ?? []) {
    if (e.value !== undefined || !e.valueFrom) {
      env.set(e.name, expand(e.value ?? '', env));
      continue;
    }
    const vf = e.valueFrom;
    if (vf.configMapKeyRef) {
      const r = vf.configMapKeyRef;
      const cm = await fetch('configmap', r.name ?? '', r.optional, () => objects.configMap(ns, r.name ?? ''));
      const v = cm?.data?.[r.key];
      if (v === undefined) {
        if (r.optional) continue;
        throw new ContainerConfigError(`couldn't find key ${r.key} in ConfigMap ${ns}/${r.name ?? ''}`);
      }
      env.set(e.name, v);
    } else if (vf.secretKeyRef) {
      const r = vf.secretKeyRef;
      const s = await fetch('secret', r.name ?? '', r.optional, () => objects.secret(ns, r.name ?? ''));
      const v = s?.data?.[r.key];
      if (v === undefined) {
        if (r.optional) continue;
        throw new ContainerConfigError(`couldn't find key ${r.key} in Secret ${ns}/${r.name ?? ''}`);
      }
      env.set(e.name, Buffer.from(v, 'base64').toString());
    } else if (vf.fieldRef) {
      env.set(e.name, podFieldValue(pod, vf.fieldRef.fieldPath, facts));
    } else if (vf.resourceFieldRef) {
      const target = vf.resourceFieldRef.containerName
        ? [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find(
            (x) => x.name === vf.resourceFieldRef!.containerName,
          )
        : c;
      env.set(e.name, resourceFieldValue(target, vf.resourceFieldRef, facts));
    }
  }
  return [...env].map(([key, value]) => ({ key, value }));
}

/** The directory of the pod under the root directory. */
export function podDir(facts: NodeFacts, uid: string): string {
  return join(facts.rootDir, 'pods', uid);
}

/** Writes files atomically-ish (new directory, then rename), as the kubelet's atomic writer does. */
function writeFiles(dir: string, files: Map<string, { data: Buffer; mode: number }>): void {
  const fresh = `${dir}.tmp-${process.pid}`;
  rmSync(fresh, { recursive: true, force: true });
  mkdirSync(fresh, { recursive: true, mode: 0o755 });
  for (const [p, f] of files) {
    const target = join(fresh, p);
    if (!target.startsWith(fresh + '/')) continue;
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, f.data, { mode: f.mode });
    chmodSync(target, f.mode);
  }
  const old = `${dir}.old-${process.pid}`;
  if (existsSync(dir)) renameSync(dir, old);
  renameSync(fresh, dir);
  rmSync(old, { recursive: true, force: true });
}

function sameFiles(dir: string, files: Map<string, { data: Buffer; mode: number }>): boolean {
  if (!existsSync(dir)) return false;
  try {
    const listed = (d: string, base = ''): string[] =>
      readdirSync(d, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? listed(join(d, e.name), join(base, e.name)) : [join(base, e.name)],
      );
    const have = listed(dir);
    if (have.length !== files.size) return false;
    for (const [p, f] of files) if (!readFileSync(join(dir, p)).equals(f.data)) return false;
    return true;
  } catch {
    return false;
  }
}

type KeyToPath = { key: string; path: string; mode?: number };

function projectKeys(
  data: Record<string, Buffer>,
  items: KeyToPath[] | undefined,
  defaultMode: number,
  what: string,
  optional: boolean | undefined,
): Map<string, { data: Buffer; mode: number }> {
  const out = new Map<string, { data: Buffer; mode: number }>();
  if (!items || items.length === 0) {
    for (const [k, v] of Object.entries(data)) out.set(k, { data: v, mode: defaultMode });
    return out;
  }
  for (const it of items) {
    const v = data[it.key];
    if (v === undefined) {
      if (optional) continue;
      throw new ContainerConfigError(`configmap or secret ${what} has no key ${it.key}`);
    }
    out.set(it.path, { data: v, mode: it.mode ?? defaultMode });
  }
  return out;
}

/**
 * Sets up (or refreshes) every volume of the pod and returns the host path of each by name. emptyDir is created
 * once (mode 0777, as the kubelet); configMap, secret, downwardAPI and projected volumes are rewritten when their
 * content changed; hostPath is used as it is (created for `DirectoryOrCreate`/`FileOrCreate`).
 */
export async function setUpVolumes(pod: Pod, objects: ObjectCache, facts: NodeFacts): Promise<Map<string, string>> {
  const uid = pod.metadata?.uid ?? '';
  const ns = pod.metadata?.namespace ?? 'default';
  const base = join(podDir(facts, uid), 'volumes');
  const out = new Map<string, string>();
  const cmData = async (name: string, optional?: boolean): Promise<Record<string, Buffer> | undefined> => {
    try {
      const cm = await objects.configMap(ns, name);
      const d: Record<string, Buffer> = {};
      for (const [k, v] of Object.entries(cm.data ?? {})) d[k] = Buffer.from(v);
      for (const [k, v] of Object.entries(cm.binaryData ?? {})) d[k] = Buffer.from(v, 'base64');
      return d;
    } catch (err) {
      if (isNotFound(err)) {
        if (optional) return {};
        throw new ContainerConfigError(`configmap "${name}" not found`);
      }
      throw err;
    }
  };
  const secretData = async (name: string, optional?: boolean): Promise<Record<string, Buffer> | undefined> => {
    try {
      const s = await objects.secret(ns, name);
      const d: Record<string, Buffer> = {};
      for (const [k, v] of Object.entries(s.data ?? {})) d[k] = Buffer.from(v, 'base64');
      for (const [k, v] of Object.entries(s.stringData ?? {})) d[k] = Buffer.from(v);
      return d;
    } catch (err) {
      if (isNotFound(err)) {
        if (optional) return {};
        throw new ContainerConfigError(`secret "${name}" not found`);
      }
      throw err;
    }
  };
  const downward = (
    items: Array<{ path: string; fieldRef?: { fieldPath: string }; resourceFieldRef?: unknown; mode?: number }>,
    mode: number,
  ): Map<string, { data: Buffer; mode: number }> => {
    const files = new Map<string, { data: Buffer; mode: number }>();
    for (const it of items) {
      let text = '';
      if (it.fieldRef) text = podFieldValue(pod, it.fieldRef.fieldPath, facts);
      else if (it.resourceFieldRef) {
        const r = it.resourceFieldRef as { containerName?: string; resource: string; divisor?: unknown };
        const c = (pod.spec?.containers ?? []).find((x) => x.name === r.containerName);
        text = resourceFieldValue(c, r, facts);
      }
      files.set(it.path, { data: Buffer.from(text), mode: it.mode ?? mode });
    }
    return files;
  };
  for (const v of (pod.spec?.volumes ?? []) as Volume[]) {
    if (v.hostPath) {
      const t = v.hostPath.type ?? '';
      if (t === 'DirectoryOrCreate' && !existsSync(v.hostPath.path))
        mkdirSync(v.hostPath.path, { recursive: true, mode: 0o755 });
      if (t === 'FileOrCreate' && !existsSync(v.hostPath.path)) writeFileSync(v.hostPath.path, '', { mode: 0o644 });
      if ((t === 'Directory' || t === 'File') && !existsSync(v.hostPath.path))
        throw new ContainerConfigError(`hostPath type check failed: ${v.hostPath.path} does not exist`);
      out.set(v.name, v.hostPath.path);
      continue;
    }
    if (v.emptyDir) {
      const dir = join(base, 'empty-dir', v.name);
      if (!existsSync(dir)) {
        mkdirSync(dir, { recursive: true });
        chmodSync(dir, 0o777);
      }
      out.set(v.name, dir);
      continue;
    }
    let files: Map<string, { data: Buffer; mode: number }> | undefined;
    let plugin = '';
    if (v.configMap) {
      plugin = 'configmap';
      const d = await cmData(v.configMap.name ?? '', v.configMap.optional);
      files = projectKeys(
        d ?? {},
        v.configMap.items,
        v.configMap.defaultMode ?? 0o644,
        v.configMap.name ?? '',
        v.configMap.optional,
      );
    } else if (v.secret) {
      plugin = 'secret';
      const d = await secretData(v.secret.secretName ?? '', v.secret.optional);
      files = projectKeys(
        d ?? {},
        v.secret.items,
        v.secret.defaultMode ?? 0o644,
        v.secret.secretName ?? '',
        v.secret.optional,
      );
    } else if (v.downwardAPI) {
      plugin = 'downward-api';
      files = downward(v.downwardAPI.items ?? [], v.downwardAPI.defaultMode ?? 0o644);
    } else if (v.projected) {
      plugin = 'projected';
      files = new Map();
      const mode = v.projected.defaultMode ?? 0o644;
      for (const src of v.projected.sources ?? []) {
        if (src.configMap) {
          const d = await cmData(src.configMap.name ?? '', src.configMap.optional);
          for (const [p, f] of projectKeys(
            d ?? {},
            src.configMap.items,
            mode,
            src.configMap.name ?? '',
            src.configMap.optional,
          ))
            files.set(p, f);
        } else if (src.secret) {
          const d = await secretData(src.secret.name ?? '', src.secret.optional);
          for (const [p, f] of projectKeys(d ?? {}, src.secret.items, mode, src.secret.name ?? '', src.secret.optional))
            files.set(p, f);
        } else if (src.downwardAPI) {
          for (const [p, f] of downward(src.downwardAPI.items ?? [], mode)) files.set(p, f);
        } else if (src.serviceAccountToken) {
          const sat = src.serviceAccountToken;
          const t = await objects.token(
            { namespace: ns, name: pod.metadata?.name ?? '', uid },
            pod.spec?.serviceAccountName || 'default',
            sat.audience,
            sat.expirationSeconds ?? 3607,
          );
          files.set(sat.path, { data: Buffer.from(t.token), mode: 0o644 });
        }
      }
    } else {
      // Volume types of remote storage need attach/mount machinery this agent does not have.
      throw new ContainerConfigError(
        `volume ${v.name}: unsupported volume type (supported: emptyDir, hostPath, configMap, secret, downwardAPI, projected)`,
      );
    }
    const dir = join(base, plugin, v.name);
    if (!sameFiles(dir, files)) {
      mkdirSync(dirname(dir), { recursive: true });
      writeFiles(dir, files);
    }
    out.set(v.name, dir);
  }
  return out;
}

/** Removes the pod's directory (volumes, sandbox files). */
export function tearDownPodDir(facts: NodeFacts, uid: string): void {
  rmSync(podDir(facts, uid), { recursive: true, force: true });
}

/** A stable hash of the container spec: a changed spec means the container is replaced (as the kubelet does). */
export function containerHash(c: Container): string {
  return createHash('sha256').update(JSON.stringify(c)).digest('hex').slice(0, 16);
}

/** The runtime's labels of a pod's sandbox. */
export function sandboxLabels(pod: Pod): Record<string, string> {
  return {
    [LABEL_POD_NAME]: pod.metadata?.name ?? '',
    [LABEL_POD_NAMESPACE]: pod.metadata?.namespace ?? '',
    [LABEL_POD_UID]: pod.metadata?.uid ?? '',
  };
}

/** The sandbox configuration of a pod (model: `kuberuntime_sandbox.go` `generatePodSandboxConfig`). */
export function sandboxConfig(pod: Pod, facts: NodeFacts, attempt: number): PodSandboxConfig {
  const m = pod.metadata ?? {};
  const spec = pod.spec ?? { containers: [] };
  const hostNetwork = spec.hostNetwork === true;
  const ports = (spec.containers ?? []).flatMap((c) =>
    (c.ports ?? []).map((p) => ({
      protocol: (p.protocol ?? 'TCP') as 'TCP' | 'UDP' | 'SCTP',
      containerPort: p.containerPort,
      ...(p.hostPort ? { hostPort: p.hostPort } : {}),
      ...(p.hostIP ? { hostIp: p.hostIP } : {}),
    })),
  );
  const sc = spec.securityContext;
  return {
    metadata: { name: m.name ?? '', namespace: m.namespace ?? '', uid: m.uid ?? '', attempt },
    ...(hostNetwork ? {} : { hostname: spec.hostname || m.name || '' }),
    logDirectory: join(facts.rootDir, 'logs', 'pods', `${m.namespace ?? ''}_${m.name ?? ''}_${m.uid ?? ''}`),
    ...(facts.clusterDns.length > 0 && spec.dnsPolicy !== 'Default'
      ? {
          dnsConfig: {
            servers: facts.clusterDns,
            searches: facts.clusterDomain
              ? [`${m.namespace}.svc.${facts.clusterDomain}`, `svc.${facts.clusterDomain}`, facts.clusterDomain]
              : [],
            options: ['ndots:5'],
          },
        }
      : {}),
    portMappings: ports,
    labels: { ...(m.labels ?? {}), ...sandboxLabels(pod) },
    annotations: { ...(m.annotations ?? {}) },
    linux: {
      cgroupParent: `/platform/pod${m.uid ?? ''}`,
      securityContext: {
        namespaceOptions: {
          network: hostNetwork ? 'NODE' : 'POD',
          pid: spec.hostPID ? 'NODE' : spec.shareProcessNamespace ? 'POD' : 'CONTAINER',
          ipc: spec.hostIPC ? 'NODE' : 'POD',
        },
        ...(sc?.runAsUser !== undefined ? { runAsUser: sc.runAsUser } : {}),
        ...(sc?.runAsGroup !== undefined ? { runAsGroup: sc.runAsGroup } : {}),
        ...(sc?.supplementalGroups ? { supplementalGroups: sc.supplementalGroups } : {}),
      },
    },
  };
}

/** The runtime configuration of one container (model: `generateContainerConfig`). */
export function containerConfig(
  pod: Pod,
  c: Container,
  env: Array<{ key: string; value: string }>,
  volumes: Map<string, string>,
  restartCount: number,
): ContainerConfig {
  const envMap = new Map(env.map((e) => [e.key, e.value]));
  const mounts: Mount[] = [];
  for (const vm of c.volumeMounts ?? []) {
    const host = volumes.get(vm.name);
    if (host === undefined)
      throw new ContainerConfigError(`cannot find volume "${vm.name}" to mount into container "${c.name}"`);
    mounts.push({
      containerPath: vm.mountPath,
      hostPath: vm.subPath ? join(host, vm.subPath) : host,
      readonly: vm.readOnly === true,
    });
  }
  const psc = pod.spec?.securityContext;
  const sc = c.securityContext;
  const runAsUser = sc?.runAsUser ?? psc?.runAsUser;
  const runAsGroup = sc?.runAsGroup ?? psc?.runAsGroup;
  const limits = (c.resources?.limits ?? {}) as Record<string, string>;
  const requests = (c.resources?.requests ?? {}) as Record<string, string>;
  const memLimit = quantityNumber(limits.memory);
  const cpuLimit = quantityNumber(limits.cpu);
  const cpuReq = quantityNumber(requests.cpu ?? limits.cpu);
  const uid = pod.metadata?.uid ?? '';
  const spec = pod.spec;
  return {
    metadata: { name: c.name, attempt: restartCount },
    image: c.image ?? '',
    command: (c.command ?? []).map((s) => expand(s, envMap)),
    args: (c.args ?? []).map((s) => expand(s, envMap)),
    ...(c.workingDir ? { workingDir: c.workingDir } : {}),
    envs: env,
    mounts,
    labels: { ...sandboxLabels(pod), [LABEL_CONTAINER_NAME]: c.name },
    annotations: {
      [ANNOTATION_CONTAINER_HASH]: containerHash(c),
      [ANNOTATION_RESTART_COUNT]: String(restartCount),
      [ANNOTATION_TERMINATION_GRACE]: String(spec?.terminationGracePeriodSeconds ?? 30),
    },
    logPath: `${c.name}/${restartCount}.log`,
    stdin: c.stdin === true,
    stdinOnce: c.stdinOnce === true,
    tty: c.tty === true,
    linux: {
      resources: {
        ...(memLimit ? { memoryLimitInBytes: Math.floor(memLimit) } : {}),
        ...(cpuLimit ? { cpuPeriod: 100_000, cpuQuota: Math.max(1000, Math.floor(cpuLimit * 100_000)) } : {}),
        ...(cpuReq ? { cpuShares: Math.max(2, Math.floor(cpuReq * 1024)) } : {}),
      },
      securityContext: {
        ...(runAsUser !== undefined ? { runAsUser } : {}),
        ...(runAsGroup !== undefined ? { runAsGroup } : {}),
        ...(psc?.supplementalGroups ? { supplementalGroups: psc.supplementalGroups } : {}),
        ...(sc?.privileged ? { privileged: true } : {}),
        ...(sc?.readOnlyRootFilesystem ? { readonlyRootfs: true } : {}),
        ...(sc?.allowPrivilegeEscalation === false ? { noNewPrivs: true } : {}),
        namespaceOptions: {
          network: spec?.hostNetwork ? 'NODE' : 'POD',
          pid: spec?.hostPID ? 'NODE' : spec?.shareProcessNamespace ? 'POD' : 'CONTAINER',
          ipc: spec?.hostIPC ? 'NODE' : 'POD',
        },
      },
    },
    ...(uid ? {} : {}),
  };
}
