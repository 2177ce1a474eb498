/**
 * Resource amounts as the scheduler counts them (model: Kubernetes 1.21 `framework.Resource` and
 * `computePodResourceRequest`): milli-CPU, bytes of memory and ephemeral storage, a pod count, and the scalar
 * resources (extended resources, hugepages, attachable volumes) by name. Quantities are parsed once per pod and
 * once per node, and memoized by text.
 */
import { type Pod, parseQuantity } from '@platform/api';

export const CPU = 'cpu';
export const MEMORY = 'memory';
export const EPHEMERAL_STORAGE = 'ephemeral-storage';
export const PODS = 'pods';

/** CPU counted for a container without a CPU request when scoring (100m, as 1.21's `DefaultMilliCPURequest`). */
export const DEFAULT_MILLI_CPU_REQUEST = 100;
/** Memory counted for a container without a memory request when scoring (200 MiB). */
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

const milliMemo = new Map<string, number>();
const valueMemo = new Map<string, number>();

/** A quantity text in thousandths (CPU). */
export function milliValue(q: string | undefined): number {
  if (q === undefined) return 0;
  let v = milliMemo.get(q);
  if (v === undefined) {
    v = parseQuantity(String(q)).milliValueNumber();
    if (milliMemo.size < 10000) milliMemo.set(q, v);
  }
  return v;
}

/** A quantity text in whole units, rounded up (memory, storage, counts). */
export function unitValue(q: string | undefined): number {
  if (q === undefined) return 0;
  let v = valueMemo.get(q);
  if (v === undefined) {
    v = parseQuantity(String(q)).valueNumber();
    if (valueMemo.size < 10000) valueMemo.set(q, v);
  }
  return v;
}

/** Whether a resource name is scalar (extended, hugepages, attachable volumes), as `IsScalarResourceName`. */
export function isScalarResourceName(name: string): boolean {
  return (
    name.startsWith('hugepages-') ||
    name.startsWith('attachable-volumes-') ||
    (name.includes('/') && !name.startsWith('kubernetes.io/') && !name.startsWith('platform/')) ||
    name.startsWith('requests.')
  );
}

/** Whether a resource is an extended resource (a domain-prefixed name outside the platform's own). */
export function isExtendedResourceName(name: string): boolean {
  return name.includes('/') && !name.startsWith('kubernetes.io/') && !name.startsWith('platform/');
}

/** An amount of each resource. */
export class Resource {
  milliCPU = 0;
  memory = 0;
  ephemeralStorage = 0;
  allowedPodNumber = 0;
  scalar: Map<string, number> | undefined;

  /** From a resource list (`requests`, `allocatable`). */
  static fromList(list: Readonly<Record<string, string>> | undefined): Resource {
    const r = new Resource();
    r.addList(list);
    return r;
  }

  addList(list: Readonly<Record<string, string>> | undefined): void {
    if (!list) return;
    for (const name of Object.keys(list)) {
      const q = list[name] as string;
      switch (name) {
        case CPU:
          this.milliCPU += milliValue(q);
          break;
        case MEMORY:
          this.memory += unitValue(q);
          break;
        case EPHEMERAL_STORAGE:
          this.ephemeralStorage += unitValue(q);
          break;
        case PODS:
          this.allowedPodNumber += unitValue(q);
          break;
        default:
          if (isScalarResourceName(name)) this.addScalar(name, unitValue(q));
      }
    }
  }

  addScalar(name: string, v: number): void {
    (this.scalar ??= new Map()).set(name, (this.scalar.get(name) ?? 0) + v);
  }

  /** Each amount raised to `list`'s where that is larger (init containers). */
  setMaxList(list: Readonly<Record<string, string>> | undefined): void {
    if (!list) return;
    const o = Resource.fromList(list);
    this.milliCPU = Math.max(this.milliCPU, o.milliCPU);
    this.memory = Math.max(this.memory, o.memory);
    this.ephemeralStorage = Math.max(this.ephemeralStorage, o.ephemeralStorage);
    for (const [k, v] of o.scalar ?? []) if (v > (this.scalar?.get(k) ?? 0)) (this.scalar ??= new Map()).set(k, v);
  }

  add(o: Resource, sign = 1): void {
    this.milliCPU += sign * o.milliCPU;
    this.memory += sign * o.memory;
    this.ephemeralStorage += sign * o.ephemeralStorage;
    for (const [k, v] of o.scalar ?? []) this.addScalar(k, sign * v);
  }

  get(name: string): number {
    switch (name) {
      case CPU:
        return this.milliCPU;
      case MEMORY:
        return this.memory;
      case EPHEMERAL_STORAGE:
        return this.ephemeralStorage;
      case PODS:
        return this.allowedPodNumber;
      default:
        return this.scalar?.get(name) ?? 0;
    }
  }

  clone(): Resource {
    const r = new Resource();
    r.milliCPU = this.milliCPU;
    r.memory = this.memory;
    r.ephemeralStorage = this.ephemeralStorage;
    r.allowedPodNumber = this.allowedPodNumber;
    if (this.scalar) r.scalar = new Map(this.scalar);
    return r;
  }

  isZero(): boolean {
    if (this.milliCPU !== 0 || this.memory !== 0 || this.ephemeralStorage !== 0) return false;
    for (const v of this.scalar?.values() ?? []) if (v !== 0) return false;
    return true;
  }
}

/** A pod's requests: the sum over containers, raised to each init container's, plus the overhead. */
export interface PodRequests {
  request: Resource;
  /** CPU and memory with the defaults of {@link DEFAULT_MILLI_CPU_REQUEST} for unset requests (scoring). */
  nonZeroCPU: number;
  nonZeroMemory: number;
}

const requestMemo = new WeakMap<Pod, PodRequests>();

/** The requests of a pod (memoized per pod object; pods from informers are never mutated). */
export function podRequests(pod: Pod): PodRequests {
  let r = requestMemo.get(pod);
  if (r) return r;
  const request = new Resource();
  let nonZeroCPU = 0;
  let nonZeroMemory = 0;
  for (const c of pod.spec?.containers ?? []) {
    const req = c.resources?.requests;
    request.addList(req);
    nonZeroCPU += req?.[CPU] !== undefined ? milliValue(req[CPU]) : DEFAULT_MILLI_CPU_REQUEST;
    nonZeroMemory += req?.[MEMORY] !== undefined ? unitValue(req[MEMORY]) : DEFAULT_MEMORY_REQUEST;
  }
  for (const c of pod.spec?.initContainers ?? []) {
    const req = c.resources?.requests;
    request.setMaxList(req);
    nonZeroCPU = Math.max(nonZeroCPU, req?.[CPU] !== undefined ? milliValue(req[CPU]) : DEFAULT_MILLI_CPU_REQUEST);
    nonZeroMemory = Math.max(
      nonZeroMemory,
      req?.[MEMORY] !== undefined ? unitValue(req[MEMORY]) : DEFAULT_MEMORY_REQUEST,
    );
  }
  const overhead = pod.spec?.overhead as Record<string, string> | undefined;
  if (overhead) {
    request.addList(overhead);
    nonZeroCPU += milliValue(overhead[CPU]);
    nonZeroMemory += unitValue(overhead[MEMORY]);
  }
  r = { request, nonZeroCPU, nonZeroMemory };
  requestMemo.set(pod, r);
  return r;
}
