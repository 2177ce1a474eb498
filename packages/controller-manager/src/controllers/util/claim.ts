/**
 * Adoption and release of dependents (model: `pkg/controller/controller_ref_manager.go`): a controller owns the
 * objects whose controller reference names it; it adopts orphans its selector matches (unless it is being deleted)
 * and releases those it owns that its selector no longer matches. Both are merge patches of `ownerReferences`
 * carrying the resourceVersion read, so a concurrent change makes them conflict instead of clobbering.
 */
import { type ApiObject, isNotFound, type OwnerReference, type Selector } from '@platform/api';
import { type ResourceClient } from '@platform/client';

import { getControllerOf } from './pods';

/** What `claim` needs to know of the controller. */
export interface ClaimOwner {
  /** The controller as cached. */
  owner: ApiObject;
  selector: Selector;
  /** The controller reference to put on adopted objects. */
  ref: OwnerReference;
  /**
   * Reads the controller fresh from the API (a quorum read) before the first adoption: adoption is refused when it
   * is gone, has another UID (recreated) or is being deleted.
   */
  getFresh(): Promise<ApiObject>;
}

/**
 * The objects of `candidates` that `o.owner` controls after adopting matching orphans and releasing owned
 * non-matching ones (writes through `client`). Objects another controller owns are left alone; objects that vanish
 * while being claimed are dropped. Throws the first other API error (the caller's sync fails and is retried).
 */
export async function claim<T extends ApiObject>(
  o: ClaimOwner,
  candidates: readonly T[],
  client: ResourceClient<T>,
  signal?: AbortSignal,
): Promise<T[]> {
  const uid = o.owner.metadata?.uid;
  const claimed: T[] = [];
  let adoptable: boolean | undefined;
  const canAdopt = async (): Promise<boolean> => {
    if (adoptable === undefined) {
      try {
        const fresh = await o.getFresh();
        adoptable = fresh.metadata?.uid === uid && !fresh.metadata?.deletionTimestamp;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        adoptable = false;
      }
    }
    return adoptable;
  };
  for (const obj of candidates) {
    const ref = getControllerOf(obj);
    const matches = o.selector.matches(obj.metadata?.labels);
    if (ref) {
      if (ref.uid !== uid) continue;
      if (matches) {
        claimed.push(obj);
        continue;
      }
      if (o.owner.metadata?.deletionTimestamp) continue; // no point releasing what is about to be collected
      await patchOwners(
        client,
        obj,
        (obj.metadata?.ownerReferences ?? []).filter((r) => r.uid !== uid),
        signal,
      );
      continue;
    }
    if (!matches || obj.metadata?.deletionTimestamp || o.owner.metadata?.deletionTimestamp) continue;
    if (!(await canAdopt())) continue;
    const adopted = await patchOwners(client, obj, [...(obj.metadata?.ownerReferences ?? []), o.ref], signal);
    if (adopted) claimed.push(adopted);
  }
  return claimed;
}

async function patchOwners<T extends ApiObject>(
  client: ResourceClient<T>,
  obj: T,
  owners: OwnerReference[],
  signal?: AbortSignal,
): Promise<T | undefined> {
  try {
    return await client
      .namespace(obj.metadata?.namespace ?? '')
      .patch(
        obj.metadata?.name ?? '',
        'merge',
        { metadata: { ownerReferences: owners, resourceVersion: obj.metadata?.resourceVersion } },
        { signal },
      );
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
