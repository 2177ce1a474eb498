/**
 * The sync of one pod (model: kubelet `kubelet.go` `syncPod`/`killPod`, `kuberuntime/kuberuntime_manager.go`
 * `computePodActions`/`SyncPod`, `kuberuntime_container.go`). Each sync reads the pod's sandboxes and containers from
 * the runtime (the runtime is the truth, nothing is remembered about what was asked), decides what to do — create a
 * sandbox, run the next init container, start, restart or kill containers — then does it, and finally computes the
 * pod status from a fresh read and hands it to the status manager.
 *
 * Restarts follow `restartPolicy` with Kubernetes' crash-loop back-off: the first restart is immediate, then the
 * container waits 10 s, 20 s, 40 s ... up to 5 min after it exited (`CrashLoopBackOff`); the back-off of a
 * container that ran for 10 minutes is forgotten. Termination runs the preStop hook, then the runtime's stop (SIGTERM,
 * SIGKILL after what is left of the grace period).
 */
import { request as httpRequest } from 'node:http';

import { type Container, type ContainerStatus as ApiContainerStatus, type Pod, type PodCondition } from '@platform/api';
import { type EventRecorder } from '@platform/client';
import { type Logger } from '@platform/common';

import { type ProbeManager } from '../probes/prober';
import {
  ANNOTATION_CONTAINER_HASH,
  ANNOTATION_RESTART_COUNT,
  ANNOTATION_TERMINATION_GRACE,
  type ContainerStatus,
  isRuntimeError,
  LABEL_CONTAINER_NAME,
  LABEL_POD_UID,
  type PodSandbox,
  type PodSandboxConfig,
  type PodSandboxStatus,
  type Runtime,
} from '../runtime/runtime';
import { type PodStatus, type StatusManager } from '../status/status-manager';
import {
  ContainerConfigError,
  containerConfig,
  containerEnv,
  containerHash,
  type NodeFacts,
  sandboxConfig,
  setUpVolumes,
  tearDownPodDir,
} from './container-config';
import { type ObjectCache } from './objects';

const BACKOFF_INITIAL_MS = 10_000;
const BACKOFF_MAX_MS = 300_000;

/** Per-container crash-loop back-off (model: client-go `flowcontrol.Backoff`). */
export class Backoff {
  private readonly entries = new Map<string, { durationMs: number; lastUpdate: number }>();

  constructor(
    private readonly initialMs = BACKOFF_INITIAL_MS,
    private readonly maxMs = BACKOFF_MAX_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether `key` is still backing off from an event at `since` (ms); returns the wait left, or 0. */
  remaining(key: string, since: number): number {
    const e = this.entries.get(key);
    if (!e) return 0;
    if (this.now() - e.lastUpdate > 2 * this.maxMs) {
      this.entries.delete(key);
      return 0;
    }
    return Math.max(0, since + e.durationMs - this.now());
  }

  /** Records one more restart of `key`: the next wait doubles. */
  next(key: string): void {
    const e = this.entries.get(key);
    const now = this.now();
    if (!e || now - e.lastUpdate > 2 * this.maxMs)
      this.entries.set(key, { durationMs: this.initialMs, lastUpdate: now });
    else this.entries.set(key, { durationMs: Math.min(e.durationMs * 2, this.maxMs), lastUpdate: now });
  }

  /** The current wait of `key` (ms). */
  duration(key: string): number {
    return this.entries.get(key)?.durationMs ?? 0;
  }

  /** Forgets every key starting with `prefix`. */
  forget(prefix: string): void {
    for (const k of this.entries.keys()) if (k.startsWith(prefix)) this.entries.delete(k);
  }
}

/** What the syncer needs. */
export interface PodSyncerDeps {
  runtime: Runtime;
  facts: NodeFacts;
  objects: ObjectCache;
  statuses: StatusManager;
  probes: ProbeManager;
  recorder?: EventRecorder;
  log: Logger;
  /** Whether the pod came from a file or URL (its status goes to its mirror pod). */
  isStatic(pod: Pod): boolean;
  /** The API object events are about (the mirror pod of a static pod). */
  eventTarget?(pod: Pod): Pod;
}

interface Observed {
  sandboxes: PodSandbox[];
  ready?: PodSandbox;
  ip: string;
  /** Containers of the ready sandbox (or of the newest sandbox), newest first, with statuses. */
  containers: ContainerStatus[];
  /** Containers this sync created since (in the ready sandbox). */
  created: string[];
}

type Waiting = { reason: string; message: string };

function toRfc3339(ms: number): string | undefined {
  return ms > 0 ? new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z') : undefined;
}

/** The grace period of a pod being deleted (its deletion grace, else its spec, else 30 s). */
export function gracePeriodOf(pod: Pod | undefined): number {
  return pod?.metadata?.deletionGracePeriodSeconds ?? pod?.spec?.terminationGracePeriodSeconds ?? 30;
}

/** Syncs pods. One instance serves every pod of the node; per-pod calls are serialized by the pod workers. */
export class PodSyncer {
  readonly backoff = new Backoff();
  /** Scheme of container ids in the status (`containerd://`); the runtime's name until the agent learns it. */
  idScheme = '';
  private readonly waiting = new Map<string, Waiting>();
  private readonly startTimes = new Map<string, string>();
  private readonly lastPods = new Map<string, Pod>();
  /** The IP of each ready sandbox, read once: a sandbox keeps its IP for its life (one status call per sync less). */
  private readonly sandboxIps = new Map<string, string>();
  /** Per pod, the containers its last sync saw and their states (the relist skips what a sync already saw). */
  private readonly seenStates = new Map<string, Map<string, string>>();

  constructor(private readonly d: PodSyncerDeps) {}

  private event(pod: Pod, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const target = this.d.eventTarget?.(pod) ?? pod;
    this.d.recorder?.event({ ...target, apiVersion: 'v1', kind: 'Pod' }, type, reason, message);
  }

  private async observe(uid: string): Promise<Observed> {
    const rt = this.d.runtime;
    const sandboxes = (await rt.listPodSandboxes({ labelSelector: { [LABEL_POD_UID]: uid } })).sort(
      (a, b) => b.createdAt - a.createdAt,
    );
    const ready = sandboxes.find((s) => s.state === 'SANDBOX_READY');
    const current = ready ?? sandboxes[0];
    const ip = ready ? await this.sandboxIp(ready.id) : '';
    const list = current ? await rt.listContainers({ podSandboxId: current.id }) : [];
    const containers: ContainerStatus[] = [];
    for (const c of list) {
      try {
        containers.push(await rt.containerStatus(c.id));
      } catch (err) {
        if (!isRuntimeError(err, 'NotFound')) throw err;
      }
    }
    return { sandboxes, ...(ready ? { ready } : {}), ip, containers: this.seen(uid, containers), created: [] };
  }

  /** Sorts a pod's containers newest first and records their states as seen by this sync. */
  private seen(uid: string, containers: ContainerStatus[]): ContainerStatus[] {
    containers.sort((a, b) => b.createdAt - a.createdAt);
    this.seenStates.set(uid, new Map(containers.map((c) => [c.id, c.state])));
    return containers;
  }

  /**
   * `o` after a sync acted on the containers of its ready sandbox: the status of each container it knew or created,
   * read again. Sandboxes and the list of containers need no new read: the agent makes every container of a
   * sandbox, and a sandbox that stopped meanwhile is seen by the next sync (as it would be right after a full read).
   */
  private async refresh(uid: string, o: Observed): Promise<Observed> {
    const rt = this.d.runtime;
    const containers: ContainerStatus[] = [];
    for (const id of new Set([...o.containers.map((c) => c.id), ...o.created])) {
      try {
        containers.push(await rt.containerStatus(id));
      } catch (err) {
        if (!isRuntimeError(err, 'NotFound')) throw err;
      }
    }
    return { ...o, containers: this.seen(uid, containers), created: [] };
  }

  /** The IP of a ready sandbox ('' when the runtime cannot tell; asked again next time). */
  private async sandboxIp(id: string): Promise<string> {
    const known = this.sandboxIps.get(id);
    if (known) return known;
    const ip = (await this.d.runtime.podSandboxStatus(id).catch(() => undefined))?.ip ?? '';
    if (ip) this.sandboxIps.set(id, ip);
    return ip;
  }

  /** Runs a new sandbox after removing the old ones; returns what the pod looks like then (no container yet). */
  private async newSandbox(o: Observed, config: PodSandboxConfig): Promise<Observed> {
    const rt = this.d.runtime;
    for (const s of o.sandboxes) await this.removeSandbox(s.id);
    const id = await rt.runPodSandbox(config);
    // A host-network sandbox has the node's address, and a sandbox is ready once RunPodSandbox returns: its status
    // is read only for the IP of a pod network (as the kubelet reads it).
    const ready: PodSandboxStatus =
      config.linux?.securityContext?.namespaceOptions?.network === 'NODE'
        ? {
            id,
            metadata: config.metadata,
            state: 'SANDBOX_READY',
            createdAt: Date.now(),
            labels: config.labels,
            annotations: config.annotations,
            ip: this.d.facts.nodeIp,
          }
        : await rt.podSandboxStatus(id);
    if (ready.ip) this.sandboxIps.set(id, ready.ip);
    return {
      sandboxes: [ready],
      ...(ready.state === 'SANDBOX_READY' ? { ready } : {}),
      ip: ready.ip ?? '',
      containers: [],
      created: [],
    };
  }

  private async removeSandbox(id: string): Promise<void> {
    await this.d.runtime.removePodSandbox(id);
    this.sandboxIps.delete(id);
  }

  /**
   * Whether the pod's last sync saw container `id` running already, so a relist that finds it running needs no sync
   * (the container that sync just started). Any other state is acted on by a sync: an exit the last sync saw may
   * have come after it decided what to do.
   */
  saw(uid: string, id: string, state: string): boolean {
    return state === 'CONTAINER_RUNNING' && this.seenStates.get(uid)?.get(id) === state;
  }

  private latest(o: Observed, name: string): ContainerStatus[] {
    return o.containers.filter((c) => c.labels[LABEL_CONTAINER_NAME] === name);
  }

  /**
   * Syncs one pod. `pod` undefined means it left every source: everything of it is torn down. Resolves with the
   * delay before the pod wants another sync (back-off expiry), or undefined.
   */
  async sync(uid: string, pod: Pod | undefined): Promise<number | undefined> {
    if (pod) this.lastPods.set(uid, pod);
    const terminating =
      !pod ||
      pod.metadata?.deletionTimestamp !== undefined ||
      pod.status?.phase === 'Failed' ||
      pod.status?.phase === 'Succeeded';
    if (terminating) return this.terminate(uid, pod);

    const spec = pod.spec ?? { containers: [] };
    let o = await this.observe(uid);
    const policy = spec.restartPolicy ?? 'Always';
    let wakeIn: number | undefined;
    const wantWake = (ms: number): void => {
      wakeIn = wakeIn === undefined ? ms : Math.min(wakeIn, ms);
    };

    // Volumes: set up (and refreshed) on every sync; a failure keeps the pod in ContainerCreating.
    let volumes: Map<string, string>;
    try {
      volumes = await setUpVolumes(pod, this.d.objects, this.d.facts);
    } catch (err) {
      this.event(pod, 'Warning', 'FailedMount', `MountVolume.SetUp failed: ${(err as Error).message}`);
      this.publishStatus(
        pod,
        o,
        spec.containers.map((c) => [c.name, { reason: 'ContainerCreating', message: '' }]),
      );
      return 10_000;
    }

    // Sandbox.
    let sbConfig: PodSandboxConfig = sandboxConfig(pod, this.d.facts, o.sandboxes.length);
    if (!o.ready) {
      const finished = this.podFinished(pod, o);
      if (finished) {
        this.publishStatus(pod, o);
        return undefined;
      }
      try {
        o = await this.newSandbox(o, sbConfig);
      } catch (err) {
        const msg = (err as Error).message;
        this.event(pod, 'Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${msg}`);
        const reason = isRuntimeError(err, 'CreateContainerConfigError')
          ? 'CreateContainerConfigError'
          : 'ContainerCreating';
        this.publishStatus(
          pod,
          o,
          spec.containers.map((c) => [c.name, { reason, message: msg }]),
        );
        return 10_000;
      }
      sbConfig = sandboxConfig(pod, this.d.facts, 0);
      if (!o.ready) {
        this.publishStatus(
          pod,
          o,
          spec.containers.map((c) => [c.name, { reason: 'ContainerCreating', message: '' }]),
        );
        return 1000;
      }
    }
    const sandboxId = o.ready.id;

    // Whether this sync changed anything in the runtime (else what it read at its start is still the pod's state).
    let acted = false;
    // Init containers, in order: one at a time.
    let initialized = true;
    for (const ic of spec.initContainers ?? []) {
      const [cur] = this.latest(o, ic.name);
      if (cur && cur.state === 'CONTAINER_EXITED' && cur.exitCode === 0) continue;
      initialized = false;
      if (cur && cur.state === 'CONTAINER_RUNNING') break;
      if (cur && cur.state === 'CONTAINER_EXITED') {
        if (policy === 'Never') break; // the pod failed (getPhase)
        const wait = this.restartWait(uid, ic.name, cur);
        if (wait > 0) {
          wantWake(wait);
          break;
        }
      }
      acted = true;
      await this.startContainer(pod, ic, sandboxId, sbConfig, volumes, cur, o);
      break;
    }

    if (initialized) {
      for (const c of spec.containers) {
        const [cur] = this.latest(o, c.name);
        if (cur && cur.state === 'CONTAINER_RUNNING') {
          const changed = cur.annotations[ANNOTATION_CONTAINER_HASH] !== containerHash(c);
          const failed = this.d.probes.failed(uid, c.name, cur.id);
          if (!changed && !failed) {
            this.d.probes.ensure(pod, c, cur.id, cur.startedAt, o.ip);
            continue;
          }
          const why = changed ? `Container ${c.name} definition changed, will be restarted` : failed!;
          this.event(pod, 'Normal', 'Killing', why);
          acted = true;
          await this.killContainer(pod, c, cur.id, spec.terminationGracePeriodSeconds ?? 30);
          this.d.probes.stop(uid, c.name);
          if (policy === 'Never') continue;
          const fresh = (await this.d.runtime.containerStatus(cur.id).catch(() => cur)) as ContainerStatus;
          await this.startContainer(pod, c, sandboxId, sbConfig, volumes, fresh, o);
          continue;
        }
        if (cur && cur.state === 'CONTAINER_EXITED') {
          const restart = policy === 'Always' || (policy === 'OnFailure' && cur.exitCode !== 0);
          if (!restart) continue;
          const wait = this.restartWait(uid, c.name, cur);
          if (wait > 0) {
            this.waiting.set(`${uid}/${c.name}`, {
              reason: 'CrashLoopBackOff',
              message: `back-off ${Math.round(this.backoff.duration(`${uid}/${c.name}`) / 1000)}s restarting failed container=${c.name} pod=${pod.metadata?.name}_${pod.metadata?.namespace}(${uid})`,
            });
            this.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container');
            wantWake(wait);
            continue;
          }
        }
        acted = true;
        await this.startContainer(pod, c, sandboxId, sbConfig, volumes, cur, o);
      }
    }

    // Containers that are no longer in the spec.
    const names = new Set([...(spec.initContainers ?? []), ...spec.containers].map((c) => c.name));
    for (const c of o.containers)
      if (!names.has(c.labels[LABEL_CONTAINER_NAME] ?? '') && c.state === 'CONTAINER_RUNNING') {
        acted = true;
        await this.d.runtime.stopContainer(c.id, spec.terminationGracePeriodSeconds ?? 30);
      }

    if (acted) o = await this.refresh(uid, o);
    await this.collectGarbage(o);
    this.publishStatus(pod, o);
    return wakeIn;
  }

  /** Whether a pod whose sandbox is gone already ran to completion (so no new sandbox is made). */
  private podFinished(pod: Pod, o: Observed): boolean {
    if (o.sandboxes.length === 0) return false;
    const policy = pod.spec?.restartPolicy ?? 'Always';
    if (policy === 'Always') return false;
    return (pod.spec?.containers ?? []).every((c) => {
      const [cur] = this.latest(o, c.name);
      return cur && cur.state === 'CONTAINER_EXITED' && (policy === 'Never' || cur.exitCode === 0);
    });
  }

  /** How long (ms) the container still has to wait before it may restart; records the restart when 0. */
  private restartWait(uid: string, name: string, cur: ContainerStatus): number {
    const key = `${uid}/${name}`;
    const left = this.backoff.remaining(key, cur.finishedAt);
    if (left > 0) return left;
    this.backoff.next(key);
    return 0;
  }

  private async startContainer(
    pod: Pod,
    c: Container,
    sandboxId: string,
    sbConfig: PodSandboxConfig,
    volumes: Map<string, string>,
    previous: ContainerStatus | undefined,
    o: Observed,
  ): Promise<void> {
    const uid = pod.metadata?.uid ?? '';
    const key = `${uid}/${c.name}`;
    const rt = this.d.runtime;
    const restartCount = previous ? Number(previous.annotations[ANNOTATION_RESTART_COUNT] ?? 0) + 1 : 0;
    try {
      const image = c.image ?? '';
      const have = await rt.imageStatus({ image });
      if (!have || c.imagePullPolicy === 'Always') {
        try {
          await rt.pullImage({ image }, undefined, sbConfig);
          if (rt.name !== 'builtin') this.event(pod, 'Normal', 'Pulled', `Successfully pulled image "${image}"`);
        } catch (err) {
          this.waiting.set(key, { reason: 'ErrImagePull', message: (err as Error).message });
          this.event(pod, 'Warning', 'Failed', `Failed to pull image "${image}": ${(err as Error).message}`);
          return;
        }
      }
      const env = await containerEnv(pod, c, this.d.objects, this.d.facts);
      const config = containerConfig(pod, c, env, volumes, restartCount);
      const id = await rt.createContainer(sandboxId, config, sbConfig);
      o.created.push(id);
      this.event(pod, 'Normal', 'Created', `Created container ${c.name}`);
      await rt.startContainer(id);
      this.waiting.delete(key);
      this.event(pod, 'Normal', 'Started', `Started container ${c.name}`);
      // Older instances beyond the previous one are removed (maximum-dead-containers-per-container 1).
      for (const old of this.latest(o, c.name).slice(1)) await rt.removeContainer(old.id).catch(() => undefined);
      const post = c.lifecycle?.postStart;
      if (post) {
        const err = await this.runHook(post, id, o.ip, c, 30);
        if (err) {
          this.event(pod, 'Warning', 'FailedPostStartHook', err);
          await this.killContainer(pod, c, id, gracePeriodOf(pod), true);
        }
      }
    } catch (err) {
      const isConfig = err instanceof ContainerConfigError || isRuntimeError(err, 'CreateContainerConfigError');
      const reason = isConfig
        ? 'CreateContainerConfigError'
        : isRuntimeError(err, 'CreateContainerError')
          ? 'CreateContainerError'
          : 'RunContainerError';
      const message = (err as Error).message;
      this.waiting.set(key, { reason, message });
      this.event(pod, 'Warning', 'Failed', `Error: ${message}`);
      if (!isConfig)
        this.d.log.info('Could not start container', { pod: pod.metadata?.name, container: c.name, err: message });
    }
  }

  /** Runs a lifecycle handler; resolves with an error message, or undefined on success. */
  private async runHook(
    h: NonNullable<NonNullable<Container['lifecycle']>['postStart']>,
    containerId: string,
    podIp: string,
    c: Container,
    timeoutSeconds: number,
  ): Promise<string | undefined> {
    try {
      if (h.exec) {
        const r = await this.d.runtime.execSync(containerId, h.exec.command ?? [], timeoutSeconds);
        return r.exitCode === 0
          ? undefined
          : `Exec lifecycle hook (${(h.exec.command ?? []).join(' ')}) exited with ${r.exitCode}: ${r.stdout.toString()}${r.stderr.toString()}`;
      }
      if (h.httpGet) {
        const g = h.httpGet;
        const port =
          typeof g.port === 'number'
            ? g.port
            : Number(g.port) || ((c.ports ?? []).find((p) => p.name === g.port)?.containerPort ?? 0);
        const code = await new Promise<number>((resolve, reject) => {
          const req = httpRequest(
            { host: g.host || podIp || '127.0.0.1', port, path: g.path ?? '/', method: 'GET' },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          );
          req.setTimeout(timeoutSeconds * 1000, () => req.destroy(new Error('timeout')));
          req.once('error', reject);
          req.end();
        });
        return code >= 200 && code < 400
          ? undefined
          : `HTTP lifecycle hook (${g.path ?? '/'}) failed with status ${code}`;
      }
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  }

  /** preStop (within the grace period), then the runtime's stop with what is left of it. */
  private async killContainer(
    pod: Pod | undefined,
    c: Container | undefined,
    id: string,
    graceSeconds: number,
    skipPreStop = false,
  ): Promise<void> {
    const started = Date.now();
    const pre = c?.lifecycle?.preStop;
    if (pre && !skipPreStop && graceSeconds > 0) {
      const err = await Promise.race([
        this.runHook(pre, id, '', c, graceSeconds),
        new Promise<string>((r) => setTimeout(() => r('preStop hook timed out'), graceSeconds * 1000).unref()),
      ]);
      if (err && pod) this.event(pod, 'Warning', 'FailedPreStopHook', err);
    }
    const left =
      pre && !skipPreStop ? Math.max(2, graceSeconds - Math.floor((Date.now() - started) / 1000)) : graceSeconds;
    await this.d.runtime.stopContainer(id, left);
  }

  /** Kills every container of the pod; removes it all when the pod left every source. */
  private async terminate(uid: string, pod: Pod | undefined): Promise<number | undefined> {
    const last = pod ?? this.lastPods.get(uid);
    let o = await this.observe(uid);
    const grace = gracePeriodOf(last);
    const specOf = (name: string): Container | undefined =>
      [...(last?.spec?.containers ?? []), ...(last?.spec?.initContainers ?? [])].find((c) => c.name === name);
    const running = o.containers.filter((c) => c.state === 'CONTAINER_RUNNING' || c.state === 'CONTAINER_CREATED');
    if (running.length > 0 && last)
      this.event(last, 'Normal', 'Killing', `Stopping containers of pod ${last.metadata?.name}`);
    await Promise.all(
      running.map((c) => {
        const name = c.labels[LABEL_CONTAINER_NAME] ?? '';
        const g = pod ? grace : Number(c.annotations[ANNOTATION_TERMINATION_GRACE] ?? grace);
        return this.killContainer(last, specOf(name), c.id, g);
      }),
    );
    this.d.probes.stop(uid);
    for (const s of o.sandboxes) if (s.state === 'SANDBOX_READY') await this.d.runtime.stopPodSandbox(s.id);
    o = await this.observe(uid);
    if (pod) {
      this.publishStatus(pod, o);
      if (pod.metadata?.deletionTimestamp !== undefined) {
        if (!this.d.isStatic(pod)) this.d.statuses.requestDeletion(uid);
      }
      return undefined;
    }
    // Gone from every source: remove everything.
    for (const s of o.sandboxes) await this.removeSandbox(s.id);
    this.seenStates.delete(uid);
    tearDownPodDir(this.d.facts, uid);
    this.d.objects.forgetPod(uid);
    this.backoff.forget(`${uid}/`);
    for (const k of this.waiting.keys()) if (k.startsWith(`${uid}/`)) this.waiting.delete(k);
    this.startTimes.delete(uid);
    this.lastPods.delete(uid);
    this.d.statuses.forget(uid);
    return undefined;
  }

  private async collectGarbage(o: Observed): Promise<void> {
    const seen = new Map<string, number>();
    for (const c of o.containers) {
      const name = c.labels[LABEL_CONTAINER_NAME] ?? '';
      const n = (seen.get(name) ?? 0) + 1;
      seen.set(name, n);
      if (n > 2 && c.state === 'CONTAINER_EXITED') await this.d.runtime.removeContainer(c.id).catch(() => undefined);
    }
  }

  /** Computes the pod status from `o` and hands it to the status manager. */
  private publishStatus(pod: Pod, o: Observed, waitingOverride?: Array<[string, Waiting]>): void {
    const status = this.generateStatus(pod, o, new Map(waitingOverride ?? []));
    this.d.statuses.set(pod, status, this.d.isStatic(pod));
  }

  /** The pod status (model: `generateAPIPodStatus`, `getPhase`, `status/generate.go`). */
  generateStatus(pod: Pod, o: Observed, override = new Map<string, Waiting>()): PodStatus {
    const uid = pod.metadata?.uid ?? '';
    const spec = pod.spec ?? { containers: [] };
    const policy = spec.restartPolicy ?? 'Always';
    const old = pod.status;
    const statusOf = (c: Container, isInit: boolean): ApiContainerStatus => {
      const all = this.latest(o, c.name);
      const [cur, prev] = all;
      const key = `${uid}/${c.name}`;
      const w = override.get(c.name) ?? this.waiting.get(key);
      const oldStatus = [...(old?.containerStatuses ?? []), ...(old?.initContainerStatuses ?? [])].find(
        (s) => s.name === c.name,
      );
      const term = (x: ContainerStatus) => ({
        terminated: {
          exitCode: x.exitCode,
          ...(x.reason ? { reason: x.reason } : {}),
          ...(x.message ? { message: x.message } : {}),
          ...(toRfc3339(x.startedAt) ? { startedAt: toRfc3339(x.startedAt) } : {}),
          ...(toRfc3339(x.finishedAt) ? { finishedAt: toRfc3339(x.finishedAt) } : {}),
          containerID: `${this.idScheme || this.d.runtime.name}://${x.id}`,
        },
      });
      let state: ApiContainerStatus['state'];
      let lastState: ApiContainerStatus['lastState'] = {};
      let ready = false;
      let started = false;
      if (!cur) {
        state = {
          waiting: {
            reason: w?.reason ?? (isInit ? 'PodInitializing' : 'ContainerCreating'),
            ...(w?.message ? { message: w.message } : {}),
          },
        };
        if (isInit && w === undefined) state = { waiting: { reason: 'PodInitializing' } };
        if (!isInit && w === undefined && !this.initDone(pod, o)) state = { waiting: { reason: 'PodInitializing' } };
      } else if (cur.state === 'CONTAINER_RUNNING') {
        state = { running: { ...(toRfc3339(cur.startedAt) ? { startedAt: toRfc3339(cur.startedAt) } : {}) } };
        ready = !isInit && this.d.probes.ready(uid, c.name, cur.id);
        started = this.d.probes.started(uid, c.name, cur.id);
        if (prev) lastState = term(prev);
      } else if (cur.state === 'CONTAINER_EXITED') {
        const restarting =
          !isInit &&
          (policy === 'Always' || (policy === 'OnFailure' && cur.exitCode !== 0)) &&
          pod.metadata?.deletionTimestamp === undefined;
        if (w && restarting) {
          state = { waiting: { reason: w.reason, ...(w.message ? { message: w.message } : {}) } };
          lastState = term(cur);
        } else {
          state = term(cur);
          if (prev) lastState = term(prev);
        }
      } else {
        state = {
          waiting: { reason: w?.reason ?? 'ContainerCreating', ...(w?.message ? { message: w.message } : {}) },
        };
        if (prev) lastState = term(prev);
      }
      const restartCount = cur
        ? Number(cur.annotations[ANNOTATION_RESTART_COUNT] ?? 0)
        : (oldStatus?.restartCount ?? 0);
      return {
        name: c.name,
        state,
        lastState,
        ready,
        restartCount,
        image: c.image ?? '',
        imageID: cur?.imageRef ?? '',
        ...(cur ? { containerID: `${this.idScheme || this.d.runtime.name}://${cur.id}` } : {}),
        started,
      };
    };
    const initStatuses = (spec.initContainers ?? []).map((c) => statusOf(c, true));
    const statuses = spec.containers.map((c) => statusOf(c, false));
    // A terminal phase is final (an evicted or rejected pod stays Failed).
    const terminalBefore = old?.phase === 'Failed' || old?.phase === 'Succeeded' ? old.phase : undefined;
    const phase = terminalBefore ?? getPhase(policy, initStatuses, statuses);
    const initialized = initStatuses.every((s) => s.state?.terminated?.exitCode === 0) || phase === 'Succeeded';
    const containersReady = statuses.every((s) => s.ready) && statuses.length > 0;
    const readyReason = (): { reason?: string; message?: string } => {
      if (containersReady) return {};
      if (!initialized) {
        const pending = (spec.initContainers ?? [])
          .filter((_, i) => initStatuses[i]?.state?.terminated?.exitCode !== 0)
          .map((c) => c.name);
        return {
          reason: 'ContainersNotInitialized',
          message: `containers with incomplete status: [${pending.join(' ')}]`,
        };
      }
      const notReady = statuses.filter((s) => !s.ready).map((s) => s.name);
      return { reason: 'ContainersNotReady', message: `containers with unready status: [${notReady.join(' ')}]` };
    };
    const rr = readyReason();
    const cond = (type: string, ok: boolean, extra: { reason?: string; message?: string } = {}): PodCondition =>
      ({
        type,
        status: ok ? 'True' : 'False',
        lastProbeTime: null as unknown as undefined,
        ...(ok ? {} : extra),
      }) as PodCondition;
    const isTerminal = phase === 'Succeeded' || phase === 'Failed';
    const conditions: PodCondition[] = [
      cond('Initialized', initialized, initialized ? {} : rr),
      cond('Ready', containersReady && !isTerminal, phase === 'Succeeded' ? { reason: 'PodCompleted' } : rr),
      cond('ContainersReady', containersReady && !isTerminal, phase === 'Succeeded' ? { reason: 'PodCompleted' } : rr),
    ];
    if (!(old?.conditions ?? []).some((c) => c.type === 'PodScheduled'))
      conditions.push({ type: 'PodScheduled', status: 'True' } as PodCondition);
    if (!this.startTimes.has(uid))
      this.startTimes.set(uid, old?.startTime ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z'));
    const ip = o.ip || old?.podIP || '';
    return {
      phase,
      conditions,
      hostIP: this.d.facts.nodeIp,
      ...(ip ? { podIP: ip, podIPs: [{ ip }] } : {}),
      startTime: this.startTimes.get(uid),
      ...(initStatuses.length > 0 ? { initContainerStatuses: initStatuses } : {}),
      containerStatuses: statuses,
      qosClass: qosClass(pod),
      ...(terminalBefore && old?.reason ? { reason: old.reason } : {}),
      ...(terminalBefore && old?.message ? { message: old.message } : {}),
    };
  }

  private initDone(pod: Pod, o: Observed): boolean {
    return (pod.spec?.initContainers ?? []).every((ic) => {
      const [cur] = this.latest(o, ic.name);
      return cur && cur.state === 'CONTAINER_EXITED' && cur.exitCode === 0;
    });
  }
}

/** The pod phase from its container statuses (kubelet `getPhase`, 1.21). */
export function getPhase(
  policy: string,
  init: ApiContainerStatus[],
  regular: ApiContainerStatus[],
): 'Pending' | 'Running' | 'Succeeded' | 'Failed' {
  let pendingInit = 0;
  let failedInit = 0;
  for (const s of init) {
    const t = s.state?.terminated;
    if (t && t.exitCode === 0) continue;
    if (t && t.exitCode !== 0) failedInit++;
    if (s.state?.waiting && s.lastState?.terminated && s.lastState.terminated.exitCode !== 0) failedInit++;
    pendingInit++;
  }
  if (failedInit > 0 && policy === 'Never') return 'Failed';
  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const s of regular) {
    if (s.state?.running) running++;
    else if (s.state?.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state?.waiting) {
      if (s.lastState?.terminated) stopped++;
      else waiting++;
    } else unknown++;
  }
  if (pendingInit > 0) return 'Pending';
  if (waiting > 0) return 'Pending';
  if (running > 0 && unknown === 0) return 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

/** The QoS class of a pod (`v1/helper/qos`). */
export function qosClass(pod: Pod): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const cs = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  let any = false;
  let guaranteed = cs.length > 0;
  for (const c of cs) {
    const req = (c.resources?.requests ?? {}) as Record<string, string>;
    const lim = (c.resources?.limits ?? {}) as Record<string, string>;
    for (const r of ['cpu', 'memory']) {
      if (req[r] || lim[r]) any = true;
      const want = req[r] ?? lim[r];
      if (!lim[r] || want !== lim[r]) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
