/**
 * The node IPAM controller with the range allocator (model: Kubernetes 1.21
 * `pkg/controller/nodeipam/ipam/range_allocator.go`): every Node without pod CIDRs gets one from each cluster CIDR
 * (`--cluster-cidr`; two for dual stack) in `spec.podCIDR` / `spec.podCIDRs`; a deleted Node's CIDRs are free
 * again. At start the CIDRs existing Nodes hold, and the service range, are marked used before anything is handed
 * out, so a restart never gives two Nodes one CIDR. A full range is an Event `CIDRNotAvailable` on the Node and a
 * log line; the Node gets its CIDRs once another Node is deleted.
 *
 * Allocation happens between awaits (the sets are plain memory), and a CIDR handed to a Node is kept for it until
 * its patch lands or the Node goes, so a sync that reads a cache not yet showing the patch writes the same CIDRs.
 */
import { type Node, NodeKind, isNotFound } from '@platform/api';
import { runWorkers, WorkQueue } from '@platform/client';

import { type ControllerContext, type ControllerDefinition } from '../../controller';
import { unwrapTombstone } from '../util/informers';
import { waitForSynced } from '../util/wait-synced';
import { CIDRRangeFullError, CIDRSet, formatCIDR, parseCIDRNumbers } from './cidr-set';
import { type NodeIPAMConfig, NodeIPAMOptions, planNodeIPAM } from './options';

export { CIDRSet, CIDRRangeFullError, formatCIDR, parseCIDRNumbers } from './cidr-set';
export { type NodeIPAMConfig, NodeIPAMOptions, planNodeIPAM } from './options';

/** The reason of the Event on a Node that gets no CIDR (Kubernetes' `CIDRNotAvailable` node status change). */
export const CIDR_NOT_AVAILABLE = 'CIDRNotAvailable';
/** Kubernetes' `cidrUpdateWorkers` is 30; allocation itself is synchronous, so a few writers are plenty. */
const WORKERS = 5;

/** The pod CIDRs a Node holds (`spec.podCIDRs`, else `spec.podCIDR`). */
export function podCIDRsOf(node: Node): string[] {
  const all = node.spec?.podCIDRs ?? [];
  if (all.length) return all;
  return node.spec?.podCIDR ? [node.spec.podCIDR] : [];
}

/** The allocator's memory: the sets of node CIDRs and what each Node was given. */
class RangeAllocator {
  /** CIDRs handed out by this process, by Node name, kept until the Node is deleted. */
  private readonly given = new Map<string, { uid: string; cidrs: string[] }>();

  constructor(
    private readonly sets: CIDRSet[],
    private readonly ctx: ControllerContext,
  ) {}

  /** Marks a Node's existing CIDRs used (at start, and for Nodes whose CIDRs someone else set). */
  occupy(node: Node): void {
    for (const text of podCIDRsOf(node)) {
      const cidr = parseCIDRNumbers(text);
      const set = cidr && this.sets.find((s) => s.contains(cidr));
      if (cidr && set) set.occupy(cidr);
      else
        this.ctx.logger.warn('Node pod CIDR is outside every cluster CIDR: not tracked', {
          node: node.metadata?.name,
          podCIDR: text,
        });
    }
  }

  /** Frees what a deleted Node held and what it was given. */
  release(node: Node): void {
    const name = node.metadata?.name ?? '';
    const texts = new Set([...podCIDRsOf(node), ...(this.given.get(name)?.cidrs ?? [])]);
    this.given.delete(name);
    for (const text of texts) {
      const cidr = parseCIDRNumbers(text);
      if (cidr) for (const s of this.sets) if (s.contains(cidr)) s.release(cidr);
    }
  }

  /** One CIDR from each set for the Node (the same ones again for a Node already given some), or undefined when full. */
  allocate(node: Node): string[] | undefined {
    const name = node.metadata?.name ?? '';
    const uid = node.metadata?.uid ?? '';
    const prior = this.given.get(name);
    if (prior && prior.uid === uid) return prior.cidrs;
    if (prior) this.release({ metadata: { name } });
    const cidrs: string[] = [];
    for (const s of this.sets) {
      try {
        cidrs.push(s.allocateNext());
      } catch (err) {
        if (!(err instanceof CIDRRangeFullError)) throw err;
        this.releaseTexts(cidrs);
        this.ctx.logger.warn('No pod CIDR left for node', { node: name, error: err.message });
        return undefined;
      }
    }
    this.given.set(name, { uid, cidrs });
    return cidrs;
  }

  /** Gives back CIDRs handed out for a write that will not happen. */
  forget(name: string): void {
    const prior = this.given.get(name);
    this.given.delete(name);
    if (prior) this.releaseTexts(prior.cidrs);
  }

  private releaseTexts(texts: string[]): void {
    for (const text of texts) {
      const cidr = parseCIDRNumbers(text)!;
      for (const s of this.sets) if (s.contains(cidr)) s.release(cidr);
    }
  }
}

async function run(ctx: ControllerContext, o: NodeIPAMConfig): Promise<void> {
  const { plan, errors } = planNodeIPAM(o);
  if (errors.length) throw new Error(errors.join('; '));
  if (!plan) {
    if (o.clusterCIDR)
      ctx.logger.warn('--cluster-cidr is set but --allocate-node-cidrs is false: no pod CIDRs are allocated');
    await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
    return;
  }
  const sets = plan.sets.map((s) => new CIDRSet(s.cluster, s.maskSize));
  for (const svc of plan.services)
    for (const s of sets)
      if (s.occupy(svc))
        ctx.logger.info('Service range kept out of pod CIDRs', {
          serviceCIDR: formatCIDR(svc),
          clusterCIDR: formatCIDR(s.cluster),
        });
  const allocator = new RangeAllocator(sets, ctx);
  const nodes = ctx.informers.informerFor(NodeKind);
  const queue = new WorkQueue<string>({ name: 'nodeipam', metrics: ctx.metrics });
  ctx.signal.addEventListener('abort', () => queue.shutDown(), { once: true });
  nodes.addEventHandler({
    onAdd: (n) => queue.add(n.metadata?.name ?? ''),
    onUpdate: (_old, n) => queue.add(n.metadata?.name ?? ''),
    onDelete: (obj) => {
      allocator.release(unwrapTombstone(obj));
      // Nodes waiting for a CIDR may get the one just freed.
      for (const n of nodes.indexer.list()) if (podCIDRsOf(n).length === 0) queue.add(n.metadata?.name ?? '');
    },
  });

  const sync = async (name: string): Promise<void> => {
    const node: Node | undefined = nodes.indexer.get(name);
    if (!node) return;
    if (podCIDRsOf(node).length) {
      allocator.occupy(node);
      return;
    }
    const cidrs = allocator.allocate(node);
    if (!cidrs) {
      ctx.recorder.event(node, 'Normal', CIDR_NOT_AVAILABLE, `Node ${name} status is now: ${CIDR_NOT_AVAILABLE}`);
      return;
    }
    try {
      // The resource version makes the write fail (and the sync run again) if the Node changed meanwhile.
      await ctx.client.resource(NodeKind).patch(
        name,
        'merge',
        {
          metadata: { uid: node.metadata?.uid, resourceVersion: node.metadata?.resourceVersion },
          spec: { podCIDR: cidrs[0], podCIDRs: cidrs },
        },
        { signal: ctx.signal },
      );
      ctx.logger.info('Set node pod CIDRs', { node: name, podCIDRs: cidrs });
    } catch (err) {
      if (isNotFound(err)) {
        allocator.forget(name);
        return;
      }
      throw err;
    }
  };

  if (!(await waitForSynced(ctx.signal, [nodes]))) return;
  for (const n of nodes.indexer.list()) if (podCIDRsOf(n).length) allocator.occupy(n);
  await runWorkers(queue, WORKERS, sync, (name, err) => {
    if (!ctx.signal.aborted)
      ctx.logger.info('Failed to set the pod CIDRs of a node, retrying', { node: name, error: String(err) });
  });
}

/** The `nodeipam` controller. */
export const nodeIPAMController: ControllerDefinition<NodeIPAMConfig> = {
  name: 'nodeipam',
  enabledByDefault: true,
  serviceAccount: 'node-controller',
  options: () => new NodeIPAMOptions(),
  run,
};
