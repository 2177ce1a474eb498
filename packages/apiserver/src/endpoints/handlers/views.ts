/**
 * The views a get, list or watch response may be asked for (`as=Table`, `as=PartialObjectMetadata[List]`), built
 * from objects in their JSON form.
 */
import { type ApiObject, badRequest, type Table, tableColumns, toTable } from '@platform/api';

import { type OutputFormat } from '../negotiation/negotiate';
import { type ObjectList } from '../../registry/rest/rest';
import { type RequestScope } from './scope';
import { type Query } from './options';

type IncludeObject = 'None' | 'Object' | 'Metadata';

/** `includeObject` of a Table request: Metadata when unset; another value than the three is 400, as in Kubernetes. */
function includeObject(q: Query): IncludeObject {
  const v = q.get('includeObject');
  if (v === null || v === '') return 'Metadata';
  if (v === 'None' || v === 'Object' || v === 'Metadata') return v;
  throw badRequest(
    `includeObject: Unsupported value: ${JSON.stringify(v)}: supported values: "Metadata", "None", "Object"`,
  );
}

/** Checks the query parameters of the negotiated view (400 for a bad one), before a response or stream starts. */
export function checkViewOptions(out: OutputFormat, q: Query): void {
  if (out.view === 'Table') includeObject(q);
}

function partial(obj: ApiObject, version: string): ApiObject {
  return { apiVersion: `meta.platform/${version}`, kind: 'PartialObjectMetadata', metadata: obj.metadata ?? {} };
}

/** The view of one object. */
export function objectView(obj: ApiObject, out: OutputFormat, scope: RequestScope, q: Query): ApiObject | Table {
  switch (out.view) {
    case 'Table':
      return tableOf([obj], undefined, out, scope, q);
    case 'PartialObjectMetadata':
    case 'PartialObjectMetadataList':
      return partial(obj, out.viewVersion ?? 'v1');
    default:
      return obj;
  }
}

/** The view of a list. */
export function listView(list: ObjectList, out: OutputFormat, scope: RequestScope, q: Query): ApiObject | Table {
  switch (out.view) {
    case 'Table':
      return tableOf(list.items, list.metadata, out, scope, q);
    case 'PartialObjectMetadata':
    case 'PartialObjectMetadataList':
      return {
        apiVersion: `meta.platform/${out.viewVersion ?? 'v1'}`,
        kind: 'PartialObjectMetadataList',
        metadata: list.metadata,
        items: list.items.map((i) => partial(i, out.viewVersion ?? 'v1')),
      } as ApiObject;
    default:
      return list as ApiObject;
  }
}

function tableOf(
  items: ApiObject[],
  listMeta: ObjectList['metadata'] | undefined,
  out: OutputFormat,
  scope: RequestScope,
  q: Query,
): Table {
  const t = toTable(tableColumns(scope.columns), items, {
    now: scope.now(),
    includeObject: includeObject(q),
    listMeta: listMeta ?? {},
    noHeaders: q.get('noHeaders') === 'true',
  });
  t.apiVersion = `meta.platform/${out.viewVersion ?? 'v1beta1'}`;
  return t;
}
