/**
 * The node's own object (model: kubelet `kubelet_node_status.go`, `nodestatus/setters.go`, `nodelease/controller.go`):
 * registration, the status posted every `--node-status-update-frequency` — but written only when it changed or when
 * `--node-status-report-frequency` (5 min) passed, as the kubelet does with node Leases — and the Lease in
 * `node-lease` renewed every quarter of its duration (10 s). The simulated nodes use the same builders.
 */
import { readFileSync, statfsSync } from 'node:fs';
import { arch, cpus, hostname, release, totalmem } from 'node:os';

import {
  type ApiObject,
  formatMicroTime,
  isAlreadyExists,
  isConflict,
  isNotFound,
  type Lease,
  LeaseKind,
  type Node,
  type NodeCondition,
  NodeKind,
  parseQuantity,
} from '@platform/api';
import { type Clientset } from '@platform/client';
import { type Logger, PLATFORM_VERSION } from '@platform/common';

import { type TaintSpec } from '../cmd/options';

/** What the node object is built from. */
export interface NodeSpecInput {
  nodeName: string;
  nodeIp: string;
  hostname: string;
  labels: Map<string, string>;
  taints: TaintSpec[];
  unschedulable: boolean;
  providerId: string;
  podCidr: string;
  port: number;
}

/** Capacity inputs. */
export interface CapacityInput {
  cpus: number;
  memoryBytes: number;
  ephemeralBytes: number;
  maxPods: number;
  podsPerCore: number;
  systemReserved: Map<string, string>;
  platformReserved: Map<string, string>;
  evictionHard: Map<string, string>;
  ignoreEviction: boolean;
}

/** The registration object (model: `initialNode`). */
export function initialNode(i: NodeSpecInput): Node {
  const os = 'linux';
  const a = goArch();
  const labels: Record<string, string> = {
    'kubernetes.io/hostname': i.hostname,
    'kubernetes.io/os': os,
    'kubernetes.io/arch': a,
    'beta.kubernetes.io/os': os,
    'beta.kubernetes.io/arch': a,
  };
  for (const [k, v] of i.labels) labels[k] = v;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: i.nodeName,
      labels,
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
    },
    spec: {
      ...(i.taints.length > 0 ? { taints: i.taints.map((t) => ({ ...t })) } : {}),
      ...(i.unschedulable ? { unschedulable: true } : {}),
      ...(i.providerId ? { providerID: i.providerId } : {}),
      ...(i.podCidr ? { podCIDR: i.podCidr, podCIDRs: [i.podCidr] } : {}),
    },
  } as Node;
}

/** Go's name of the architecture. */
export function goArch(): string {
  const a = arch();
  return a === 'x64' ? 'amd64' : a === 'ia32' ? '386' : a;
}

function bytesOf(q: string | undefined, total: number): number {
  if (!q) return 0;
  if (q.endsWith('%')) return (Number(q.slice(0, -1)) / 100) * total;
  return parseQuantity(q).valueNumber();
}

/** Capacity and allocatable (model: `nodestatus.MachineInfo` and the container manager's node allocatable). */
export function capacityOf(i: CapacityInput): {
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
} {
  let pods = i.maxPods;
  if (i.podsPerCore > 0) pods = Math.min(pods, i.podsPerCore * i.cpus);
  const capacity = {
    cpu: String(i.cpus),
    memory: `${Math.floor(i.memoryBytes / 1024)}Ki`,
    'ephemeral-storage': `${Math.floor(i.ephemeralBytes / 1024)}Ki`,
    'hugepages-1Gi': '0',
    'hugepages-2Mi': '0',
    pods: String(pods),
  };
  const reserved = (r: string, total: number): number =>
    bytesOf(i.systemReserved.get(r), total) + bytesOf(i.platformReserved.get(r), total);
  const evict = (signal: string, total: number): number =>
    i.ignoreEviction ? 0 : bytesOf(i.evictionHard.get(signal), total);
  const cpuMilli = Math.max(
    0,
    i.cpus * 1000 - milli(i.systemReserved.get('cpu')) - milli(i.platformReserved.get('cpu')),
  );
  const mem = Math.max(0, i.memoryBytes - reserved('memory', i.memoryBytes) - evict('memory.available', i.memoryBytes));
  const eph = Math.max(
    0,
    i.ephemeralBytes - reserved('ephemeral-storage', i.ephemeralBytes) - evict('nodefs.available', i.ephemeralBytes),
  );
  return {
    capacity,
    allocatable: {
      cpu: cpuMilli % 1000 === 0 ? String(cpuMilli / 1000) : `${cpuMilli}m`,
      memory: `${Math.floor(mem / 1024)}Ki`,
      'ephemeral-storage': String(Math.floor(eph)),
      'hugepages-1Gi': '0',
      'hugepages-2Mi': '0',
      pods: String(pods),
    },
  };
}

function milli(q: string | undefined): number {
  return q ? parseQuantity(q).milliValueNumber() : 0;
}

/** Facts of this machine. */
export function machineFacts(rootDir: string): { cpus: number; memoryBytes: number; ephemeralBytes: number } {
  let eph = 0;
  for (const dir of [rootDir, '/']) {
    try {
      const s = statfsSync(dir);
      eph = s.blocks * s.bsize;
      break;
    } catch {
      // next
    }
  }
  return { cpus: cpus().length, memoryBytes: totalmem(), ephemeralBytes: eph };
}

function readTrim(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

/** The node's system info (model: `nodestatus.MachineInfo`/`VersionInfo`). */
export function nodeInfo(runtimeVersion: string): NonNullable<Node['status']>['nodeInfo'] {
  const osRelease = readTrim('/etc/os-release');
  const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(osRelease)?.[1] ?? 'Linux';
  return {
    machineID: readTrim('/etc/machine-id'),
    systemUUID: readTrim('/sys/class/dmi/id/product_uuid') || readTrim('/etc/machine-id'),
    bootID: readTrim('/proc/sys/kernel/random/boot_id'),
    kernelVersion: release(),
    osImage: pretty,
    containerRuntimeVersion: runtimeVersion,
    kubeletVersion: `v1.21.0-platform.${PLATFORM_VERSION}`,
    kubeProxyVersion: `v1.21.0-platform.${PLATFORM_VERSION}`,
    operatingSystem: 'linux',
    architecture: goArch(),
  };
}

/** The agent's default host name: the OS host name, lowercased (as the kubelet). */
export function defaultHostname(override: string): string {
  return (override || hostname()).trim().toLowerCase();
}

/** A node condition with its reason and message (`nodestatus` setters' wording). */
export function condition(type: string, ok: boolean, reason: string, message: string): NodeCondition {
  return { type, status: ok ? 'True' : 'False', reason, message } as NodeCondition;
}

/** Node conditions of a healthy node, with pressure flags. */
export function nodeConditions(p: {
  ready: boolean;
  notReadyMessage?: string;
  memoryPressure: boolean;
  diskPressure: boolean;
  pidPressure: boolean;
}): NodeCondition[] {
  return [
    condition(
      'MemoryPressure',
      p.memoryPressure,
      p.memoryPressure ? 'AgentHasInsufficientMemory' : 'AgentHasSufficientMemory',
      p.memoryPressure ? 'node agent has insufficient memory available' : 'node agent has sufficient memory available',
    ),
    condition(
      'DiskPressure',
      p.diskPressure,
      p.diskPressure ? 'AgentHasDiskPressure' : 'AgentHasNoDiskPressure',
      p.diskPressure ? 'node agent has disk pressure' : 'node agent has no disk pressure',
    ),
    condition(
      'PIDPressure',
      p.pidPressure,
      p.pidPressure ? 'AgentHasInsufficientPID' : 'AgentHasSufficientPID',
      p.pidPressure ? 'node agent has insufficient PID available' : 'node agent has sufficient PID available',
    ),
    condition(
      'Ready',
      p.ready,
      p.ready ? 'AgentReady' : 'AgentNotReady',
      p.ready ? 'node agent is posting ready status' : (p.notReadyMessage ?? 'node agent is not ready'),
    ),
  ];
}

type NodeStatus = NonNullable<Node['status']>;

function comparable(s: NodeStatus): string {
  return JSON.stringify({
    ...s,
    conditions: (s.conditions ?? []).map((c) => ({
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
    })),
  });
}

/**
 * Posts a node's status when it changed or when the report period passed; carries transition times over and sets
 * heartbeat times on each post. One per node (the simulated nodes have one each).
 */
export class NodeStatusWriter {
  private lastKey = '';
  private lastPost = 0;
  private lastConditions: NodeCondition[] = [];
  /** Status writes sent. */
  writes = 0;

  constructor(
    private readonly clientset: Clientset,
    readonly nodeName: string,
    private readonly reportFrequencyMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Posts `status` if needed; resolves true when it wrote. Throws the client's errors. */
  async post(status: NodeStatus, force = false): Promise<boolean> {
    const key = comparable(status);
    const now = this.now();
    if (!force && key === this.lastKey && now - this.lastPost < this.reportFrequencyMs) return false;
    const ts = new Date(now).toISOString().replace(/\.\d+Z$/, 'Z');
    const conditions = (status.conditions ?? []).map((c) => {
      const prev = this.lastConditions.find((p) => p.type === c.type);
      return {
        ...c,
        lastHeartbeatTime: ts,
        lastTransitionTime: prev && prev.status === c.status ? prev.lastTransitionTime : ts,
      } as NodeCondition;
    });
    await this.clientset
      .resource(NodeKind)
      .patch(this.nodeName, 'merge', { status: { ...status, conditions } }, { subresource: 'status' });
    this.writes++;
    this.lastKey = key;
    this.lastPost = now;
    this.lastConditions = conditions;
    return true;
  }

  /** Forces the next post (e.g. after the node object was recreated). */
  reset(): void {
    this.lastKey = '';
  }
}

/**
 * Registers the node (model: `registerWithAPIServer`/`tryRegisterWithAPIServer`): create; when it exists, keep it and
 * merge in the labels the agent sets. Resolves with the node's uid. Throws the client's errors (the caller retries).
 */
export async function registerNode(clientset: Clientset, node: Node, log: Logger): Promise<string> {
  const nodes = clientset.resource(NodeKind);
  try {
    const created = (await nodes.create(node)) as Node;
    log.info('Successfully registered node', { node: node.metadata?.name });
    return created.metadata?.uid ?? '';
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
  const name = node.metadata?.name ?? '';
  const existing = (await nodes.get(name)) as Node;
  const want = node.metadata?.labels ?? {};
  const have = existing.metadata?.labels ?? {};
  if (Object.entries(want).some(([k, v]) => have[k] !== v)) {
    const updated = (await nodes.patch(name, 'merge', { metadata: { labels: want } })) as Node;
    return updated.metadata?.uid ?? '';
  }
  return existing.metadata?.uid ?? '';
}

/** Renews a node Lease (model: `nodelease/controller.go`). */
export class LeaseRenewer {
  private lease?: Lease;
  /** Lease writes sent. */
  writes = 0;

  constructor(
    private readonly clientset: Clientset,
    private readonly nodeName: string,
    private readonly durationSeconds: number,
    private readonly nodeUid: () => string,
  ) {}

  private desired(base?: Lease): Lease {
    const uid = this.nodeUid();
    return {
      ...(base ?? {}),
      apiVersion: 'coordination.platform/v1',
      kind: 'Lease',
      metadata: {
        ...(base?.metadata ?? {}),
        name: this.nodeName,
        namespace: 'node-lease',
        ...(uid ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.nodeName, uid }] } : {}),
      },
      spec: {
        ...(base?.spec ?? {}),
        holderIdentity: this.nodeName,
        leaseDurationSeconds: this.durationSeconds,
        renewTime: formatMicroTime(new Date()),
      },
    } as Lease;
  }

  /** Creates or renews the Lease; throws the client's errors. */
  async renew(): Promise<void> {
    const leases = this.clientset.resource(LeaseKind, 'node-lease');
    if (this.lease) {
      try {
        this.lease = (await leases.update(this.desired(this.lease) as Lease & ApiObject)) as Lease;
        this.writes++;
        return;
      } catch (err) {
        if (!isConflict(err) && !isNotFound(err)) throw err;
        this.lease = undefined;
      }
    }
    try {
      const cur = (await leases.get(this.nodeName)) as Lease;
      this.lease = (await leases.update(this.desired(cur) as Lease & ApiObject)) as Lease;
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.lease = (await leases.create(this.desired() as Lease & ApiObject)) as Lease;
    }
    this.writes++;
  }
}
