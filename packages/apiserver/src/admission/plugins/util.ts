/** Helpers the admission plugins share: pods' containers, the namespace of a request, quantities. */
import { type ApiObject, notFound, parseQuantity, type Pod, type Quantity } from '@platform/api';

import { type InternalClient } from '../internal-client';
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
