/**
 * Scheduler extenders (model: Kubernetes 1.21 `pkg/scheduler/core/extender.go` and `extender/v1/types.go`): an HTTP
 * service the scheduler asks, with 1.21's JSON, to filter nodes (`ExtenderArgs` → `ExtenderFilterResult`), to score
 * them (→ `HostPriorityList`, 0–10 times `weight`), to approve preemption victims (`ExtenderPreemptionArgs` →
 * `ExtenderPreemptionResult`) and to bind (`ExtenderBindingArgs` → `ExtenderBindingResult`). Each call is a POST of
 * JSON to `<urlPrefix>/<verb>`; any answer but 200 is an error.
 */
import { readFileSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

import { type Pod } from '@platform/api';

import { type NodeInfo } from '../framework/node-info';
import { type Victims } from '../framework/types';

/** The highest score an extender gives (1.21 `MaxExtenderPriority`); scaled to the plugins' 0–100. */
export const MAX_EXTENDER_PRIORITY = 10;
/** `httpTimeout` when unset or zero (1.21 `DefaultExtenderTimeout`). */
export const DEFAULT_EXTENDER_TIMEOUT_MS = 5000;

/** An extended resource an extender manages. */
export interface ExtenderManagedResource {
  name: string;
  /** NodeResourcesFit leaves it to the extender. */
  ignoredByScheduler?: boolean;
}

/** `tlsConfig` of an extender (client-go `TLSClientConfig`; the `*Data` fields are base64, as Go's []byte). */
export interface ExtenderTLSConfig {
  insecure?: boolean;
  serverName?: string;
  certFile?: string;
  keyFile?: string;
  caFile?: string;
  certData?: string;
  keyData?: string;
  caData?: string;
}

/** One entry of `extenders` in KubeSchedulerConfiguration v1beta1. */
export interface ExtenderConfig {
  urlPrefix: string;
  filterVerb?: string;
  preemptVerb?: string;
  prioritizeVerb?: string;
  weight?: number;
  bindVerb?: string;
  enableHTTPS?: boolean;
  tlsConfig?: ExtenderTLSConfig;
  /** A duration text (`30s`), already parsed to ms by the configuration. */
  httpTimeoutMs?: number;
  nodeCacheCapable?: boolean;
  managedResources?: ExtenderManagedResource[];
  ignorable?: boolean;
}

/** `HostPriority`. */
export interface HostPriority {
  host: string;
  score: number;
}

interface FilterResult {
  nodes?: { items?: { metadata?: { name?: string } }[] } | null;
  nodenames?: string[] | null;
  failedNodes?: Record<string, string> | null;
  error?: string;
}

interface MetaVictims {
  pods?: { uid?: string }[] | null;
  numPDBViolations?: number;
}

/** What the scheduler asks of an extender. */
export interface Extender {
  /** Its URL prefix (1.21 names an extender by it). */
  readonly name: string;
  isIgnorable(): boolean;
  isBinder(): boolean;
  supportsPreemption(): boolean;
  /** Whether the pod asks for a resource the extender manages (always, when it manages none). */
  isInterested(pod: Pod): boolean;
  /** The nodes it keeps, and why it dropped the others. */
  filter(pod: Pod, nodes: readonly NodeInfo[]): Promise<{ feasible: NodeInfo[]; failed: Map<string, string> }>;
  /** Its scores (0–10) and weight. */
  prioritize(pod: Pod, nodes: readonly NodeInfo[]): Promise<{ scores: HostPriority[]; weight: number }>;
  bind(pod: Pod, nodeName: string): Promise<void>;
  /** The victims per node it accepts (a subset of `victims`), read back from `node`'s pods by uid. */
  processPreemption(
    pod: Pod,
    victims: ReadonlyMap<string, Victims>,
    node: (name: string) => NodeInfo | undefined,
  ): Promise<Map<string, Victims>>;
}

function readTLS(tls: ExtenderTLSConfig | undefined, https: boolean): Record<string, unknown> {
  const data = (b64?: string, file?: string): Buffer | undefined =>
    b64 ? Buffer.from(b64, 'base64') : file ? readFileSync(file) : undefined;
  const ca = data(tls?.caData, tls?.caFile);
  const cert = data(tls?.certData, tls?.certFile);
  const key = data(tls?.keyData, tls?.keyFile);
  return {
    ...(ca ? { ca } : {}),
    ...(cert && key ? { cert, key } : {}),
    ...(tls?.serverName ? { servername: tls.serverName } : {}),
    // 1.21's makeTransport: HTTPS without a CA does not verify the server.
    rejectUnauthorized: !(tls?.insecure || (https && !ca)),
  };
}

/** An extender over HTTP(S) (1.21 `HTTPExtender`). */
export class HTTPExtender implements Extender {
  readonly name: string;
  private readonly managed: Set<string>;
  private readonly timeoutMs: number;
  private readonly agent: HttpAgent;
  private readonly https: boolean;

  constructor(private readonly c: ExtenderConfig) {
    this.name = c.urlPrefix;
    this.managed = new Set((c.managedResources ?? []).map((r) => r.name));
    this.timeoutMs = c.httpTimeoutMs || DEFAULT_EXTENDER_TIMEOUT_MS;
    this.https = new URL(c.urlPrefix).protocol === 'https:';
    this.agent = this.https
      ? new HttpsAgent({ keepAlive: true, ...readTLS(c.tlsConfig, !!c.enableHTTPS) })
      : new HttpAgent({ keepAlive: true });
  }

  /** Frees the kept-alive connections. */
  close(): void {
    this.agent.destroy();
  }

  isIgnorable(): boolean {
    return !!this.c.ignorable;
  }

  isBinder(): boolean {
    return !!this.c.bindVerb;
  }

  supportsPreemption(): boolean {
    return !!this.c.preemptVerb;
  }

  isInterested(pod: Pod): boolean {
    if (this.managed.size === 0) return true;
    const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
    return containers.some((c) =>
      [c.resources?.requests, c.resources?.limits].some((rl) => Object.keys(rl ?? {}).some((r) => this.managed.has(r))),
    );
  }

  /** POSTs `args` to `<urlPrefix>/<verb>` and decodes the JSON answer. */
  private send<T>(verb: string, args: unknown): Promise<T> {
    const url = `${this.c.urlPrefix.replace(/\/+$/, '')}/${verb}`;
    const body = Buffer.from(JSON.stringify(args));
    const request = this.https ? httpsRequest : httpRequest;
    return new Promise<T>((resolve, reject) => {
      const req = request(
        url,
        {
          method: 'POST',
          agent: this.agent,
          timeout: this.timeoutMs,
          headers: { 'Content-Type': 'application/json', 'Content-Length': String(body.length) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            if (res.statusCode !== 200) {
              reject(new Error(`failed ${verb} with extender at URL ${url}, code ${res.statusCode ?? 0}`));
              return;
            }
            try {
              resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as T);
            } catch (err) {
              reject(new Error(`extender at URL ${url}: cannot decode the ${verb} answer: ${(err as Error).message}`));
            }
          });
        },
      );
      req.on('timeout', () =>
        req.destroy(new Error(`extender at URL ${url}: ${verb} timed out after ${this.timeoutMs}ms`)),
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  /** `ExtenderArgs`: the pod with the nodes (or only their names, when the extender caches nodes). */
  private args(pod: Pod, nodes: readonly NodeInfo[]): Record<string, unknown> {
    return this.c.nodeCacheCapable
      ? { pod, nodes: null, nodenames: nodes.map((n) => n.name) }
      : { pod, nodes: { metadata: {}, items: nodes.map((n) => n.node) }, nodenames: null };
  }

  async filter(pod: Pod, nodes: readonly NodeInfo[]): Promise<{ feasible: NodeInfo[]; failed: Map<string, string> }> {
    if (!this.c.filterVerb) return { feasible: [...nodes], failed: new Map() };
    const r = await this.send<FilterResult>(this.c.filterVerb, this.args(pod, nodes));
    if (r.error) throw new Error(r.error);
    const byName = new Map(nodes.map((n) => [n.name, n]));
    const pick = (name: string): NodeInfo => {
      const n = byName.get(name);
      if (!n)
        throw new Error(
          `extender ${JSON.stringify(this.name)} claims a filtered node ${JSON.stringify(name)} which is not found in the input node list`,
        );
      return n;
    };
    let feasible: NodeInfo[] = [];
    if (this.c.nodeCacheCapable && r.nodenames) feasible = r.nodenames.map(pick);
    else if (r.nodes) feasible = (r.nodes.items ?? []).map((n) => pick(n.metadata?.name ?? ''));
    return { feasible, failed: new Map(Object.entries(r.failedNodes ?? {})) };
  }

  async prioritize(pod: Pod, nodes: readonly NodeInfo[]): Promise<{ scores: HostPriority[]; weight: number }> {
    if (!this.c.prioritizeVerb) return { scores: nodes.map((n) => ({ host: n.name, score: 0 })), weight: 0 };
    const scores = await this.send<HostPriority[] | null>(this.c.prioritizeVerb, this.args(pod, nodes));
    return { scores: scores ?? [], weight: this.c.weight ?? 0 };
  }

  async bind(pod: Pod, nodeName: string): Promise<void> {
    if (!this.c.bindVerb) throw new Error('unexpected empty bindVerb in extender');
    const r = await this.send<{ error?: string }>(this.c.bindVerb, {
      podName: pod.metadata?.name ?? '',
      podNamespace: pod.metadata?.namespace ?? '',
      podUID: pod.metadata?.uid ?? '',
      node: nodeName,
    });
    if (r?.error) throw new Error(r.error);
  }

  async processPreemption(
    pod: Pod,
    victims: ReadonlyMap<string, Victims>,
    node: (name: string) => NodeInfo | undefined,
  ): Promise<Map<string, Victims>> {
    if (!this.c.preemptVerb)
      throw new Error(`preempt verb is not defined for extender ${this.name} but run with ProcessPreemption`);
    const all = Object.fromEntries(victims);
    const args = this.c.nodeCacheCapable
      ? {
          pod,
          nodeNameToMetaVictims: Object.fromEntries(
            [...victims].map(([n, v]) => [
              n,
              { pods: v.pods.map((p) => ({ uid: p.metadata?.uid ?? '' })), numPDBViolations: v.numPDBViolations },
            ]),
          ),
        }
      : { pod, nodeNameToVictims: all };
    const r = await this.send<{ nodeNameToMetaVictims?: Record<string, MetaVictims> | null }>(this.c.preemptVerb, args);
    const out = new Map<string, Victims>();
    for (const [nodeName, mv] of Object.entries(r?.nodeNameToMetaVictims ?? {})) {
      const ni = node(nodeName);
      if (!ni) throw new Error(`extender ${this.name}: node ${JSON.stringify(nodeName)} not found`);
      const pods = (mv.pods ?? []).map((m) => {
        const p = ni.pods.find((x) => x.pod.metadata?.uid === m.uid)?.pod;
        if (!p)
          throw new Error(
            `extender: ${this.name} claims to preempt pod (UID: ${m.uid ?? ''}) on node: ${nodeName}, but the pod is not found on that node`,
          );
        return p;
      });
      out.set(nodeName, { pods, numPDBViolations: mv.numPDBViolations ?? 0 });
    }
    return out;
  }
}

/**
 * Runs the extenders' filters after the plugins' (1.21 `findNodesThatPassExtenders`): each interested extender
 * narrows the feasible nodes; the nodes it drops get its reason; an ignorable extender that fails is skipped.
 */
export async function findNodesThatPassExtenders(
  extenders: readonly Extender[],
  pod: Pod,
  feasible: NodeInfo[],
  reasons: (nodeName: string, reason: string) => void,
  warn: (msg: string, err: unknown) => void,
): Promise<NodeInfo[]> {
  let nodes = feasible;
  for (const e of extenders) {
    if (nodes.length === 0) break;
    if (!e.isInterested(pod)) continue;
    let r: { feasible: NodeInfo[]; failed: Map<string, string> };
    try {
      r = await e.filter(pod, nodes);
    } catch (err) {
      if (e.isIgnorable()) {
        warn(`Skipping extender ${e.name} as it returned error and has ignorable flag set`, err);
        continue;
      }
      throw err;
    }
    for (const [name, msg] of r.failed) reasons(name, msg);
    nodes = r.feasible;
  }
  return nodes;
}

/**
 * The extenders' scores per node, weighted and scaled to the plugins' range (1.21 `prioritizeNodes`): errors are
 * ignored, the other extenders and the plugins decide.
 */
export async function extenderScores(
  extenders: readonly Extender[],
  pod: Pod,
  nodes: readonly NodeInfo[],
): Promise<Map<string, number>> {
  const combined = new Map<string, number>();
  await Promise.all(
    extenders
      .filter((e) => e.isInterested(pod))
      .map(async (e) => {
        try {
          const { scores, weight } = await e.prioritize(pod, nodes);
          for (const s of scores) combined.set(s.host, (combined.get(s.host) ?? 0) + s.score * weight);
        } catch {
          // 1.21: prioritization errors from an extender are ignored.
        }
      }),
  );
  const scale = 100 / MAX_EXTENDER_PRIORITY;
  for (const [k, v] of combined) combined.set(k, v * scale);
  return combined;
}

/**
 * Lets the preemption extenders narrow the candidates (1.21 `CallExtenders`): each returns the nodes and victims
 * it accepts; an ignorable one that fails is skipped; none left ends preemption.
 */
export async function callPreemptionExtenders(
  extenders: readonly Extender[],
  pod: Pod,
  candidates: ReadonlyMap<string, Victims>,
  node: (name: string) => NodeInfo | undefined,
  warn: (msg: string, err: unknown) => void,
): Promise<Map<string, Victims>> {
  let victims = new Map(candidates);
  if (victims.size === 0) return victims;
  for (const e of extenders) {
    if (!e.supportsPreemption() || !e.isInterested(pod)) continue;
    try {
      victims = await e.processPreemption(pod, victims, node);
    } catch (err) {
      if (e.isIgnorable()) {
        warn(`Skipping extender ${e.name} as it returned error and has ignorable flag set`, err);
        continue;
      }
      throw err;
    }
    if (victims.size === 0) break;
  }
  return victims;
}
