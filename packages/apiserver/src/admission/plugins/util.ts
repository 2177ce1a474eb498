/** Helpers the admission plugins share: pods' containers, the namespace of a request, quantities. */
import { type ApiObject, notFound, parseQuantity, type Pod, type Quantity } from '@platform/api';

import { type GroupResource, type InternalClient } from '../internal-client';
import { type AdmissionAttributes } from '../interfaces';

/** A pod's containers of every sort (init, regular, ephemeral), as mutable records. */
export function allContainers(pod: Pod): { name?: string; image?: string; imagePullPolicy?: string }[] {
  const s = pod.spec;
  if (!s) return [];
  return [...(s.initContainers ?? []), ...(s.containers ?? []), ...(s.ephemeralContainers ?? [])] as {
    name?: string;
  }[];
}

/** Whether the request is about the main `pods` resource of the core group. */
export function isPod(a: AdmissionAttributes): boolean {
  return a.resource.group === '' && a.resource.resource === 'pods' && a.subresource === '';
}

/** The request's object as a pod (only call when {@link isPod}). */
export function podOf(a: AdmissionAttributes): Pod | undefined {
  return a.object as Pod | undefined;
}

const NAMESPACES = { group: '', resource: 'namespaces' };

/** How long a store lookup that found nothing is trusted, and how many such namespaces are remembered. */
const LIVE_LOOKUP_TTL_MS = 30_000;
const LIVE_LOOKUP_ENTRIES = 4096;

/**
 * The objects of a resource in a namespace, read as Kubernetes' quota and limit plugins read them: from the watch
 * cache (their informer's lister); when the cache has none, from the store (one created a moment ago may not be
 * cached yet), and a namespace the store showed empty is trusted to stay empty for 30 s (their live-lookup cache),
 * so writes in namespaces without any cost no store round trip.
 */
export class LiveLookup {
  /** Namespaces a store lookup found empty, until when that is trusted. */
  private readonly emptyUntil = new Map<string, number>();

  constructor(
    private readonly client: InternalClient,
    private readonly gr: GroupResource,
    private readonly now: () => number,
  ) {}

  async list(namespace: string): Promise<ApiObject[]> {
    const cached = await this.client.list(this.gr, namespace, { cached: true });
    if (cached.length > 0) return cached;
    if ((this.emptyUntil.get(namespace) ?? 0) > this.now()) return [];
    const live = await this.client.list(this.gr, namespace);
    if (live.length === 0) {
      if (this.emptyUntil.size >= LIVE_LOOKUP_ENTRIES) this.emptyUntil.clear();
      this.emptyUntil.set(namespace, this.now() + LIVE_LOOKUP_TTL_MS);
    }
    return live;
  }
}

/** The namespace object of a request, or undefined when it does not exist. */
export function getNamespace(client: InternalClient, name: string): Promise<ApiObject | undefined> {
  return client.get(NAMESPACES, '', name, { cached: true });
}

/** The namespace object, or a 404 NotFound naming it. */
export async function mustGetNamespace(client: InternalClient, name: string): Promise<ApiObject> {
  const ns = await getNamespace(client, name);
  if (!ns) throw notFound(NAMESPACES, name);
  return ns;
}

/** A quantity from a resource list value; undefined when absent or malformed (validation reports those). */
export function quantity(v: unknown): Quantity | undefined {
  if (typeof v !== 'string' && typeof v !== 'number') return undefined;
  try {
    return parseQuantity(String(v));
  } catch {
    return undefined;
  }
}

/** A pod's annotation. */
export function annotation(obj: ApiObject | undefined, key: string): string | undefined {
  return obj?.metadata?.annotations?.[key];
}

/** The mirror pod annotation (pods a node agent creates for its static pods). */
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';
