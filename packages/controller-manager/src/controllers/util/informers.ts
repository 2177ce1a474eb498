/** Small helpers around shared informers that several controllers use. */
import { type ApiObject } from '@platform/api';
import {
  type IndexFunc,
  isDeletedFinalStateUnknown,
  type DeletedFinalStateUnknown,
  type SharedIndexInformer,
} from '@platform/client';

import { getControllerOf } from './pods';

/** The index of objects by the UID of their controller (`ownerReferences[controller=true].uid`). */
export const CONTROLLER_UID_INDEX = 'controllerUID';

/** Indexes by controller UID. */
export const controllerUidIndexFunc: IndexFunc<ApiObject> = (o) => {
  const ref = getControllerOf(o);
  return ref ? [ref.uid] : [];
};

/** Adds the index `name` to a shared informer unless another controller of the process already added it. */
export function ensureIndex<T extends ApiObject>(inf: SharedIndexInformer<T>, name: string, fn: IndexFunc<T>): void {
  try {
    inf.addIndexers({ [name]: fn });
  } catch {
    // already there: every controller adds the same function under the same name
  }
}

/** The object of a delete notification, tombstone or not. */
export function unwrapTombstone<T>(o: T | DeletedFinalStateUnknown<T>): T {
  return isDeletedFinalStateUnknown(o) ? o.obj : o;
}
