/**
 * The views a get, list or watch response may be asked for (`as=Table`, `as=PartialObjectMetadata[List]`), built
 * from objects in their JSON form.
 */
import { type ApiObject, badRequest, type Table, tableColumns, toTable } from '@platform/api';

import { type OutputFormat } from '../negotiation/negotiate';
import { type ObjectList } from '../../registry/rest/rest';
import { type RequestScope } from './scope';
import { parseBool, type Query } from './options';

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
  if (out.view === 'Table') {
    includeObject(q);
    parseBool(q, 'noHeaders');
  }
}

/** The apiVersion of a view: its group as the request spelled it (`meta.platform` or `meta.k8s.io`). */
function viewApiVersion(out: OutputFormat, defaultVersion: string): string {
  return `${out.viewGroup ?? 'meta.platform'}/${out.viewVersion ?? defaultVersion}`;
}

function partial(obj: ApiObject, apiVersion: string): ApiObject {
  return { apiVersion, kind: 'PartialObjectMetadata', metadata: obj.metadata ?? {} };
}

/** The view of one object. */
export function objectView(obj: ApiObject, out: OutputFormat, scope: RequestScope, q: Query): ApiObject | Table {
  switch (out.view) {
    case 'Table':
      return tableOf([obj], undefined, out, scope, q);
    case 'PartialObjectMetadata':
    case 'PartialObjectMetadataList':
      return partial(obj, viewApiVersion(out, 'v1'));
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
        apiVersion: viewApiVersion(out, 'v1'),
        kind: 'PartialObjectMetadataList',
        metadata: list.metadata,
        items: list.items.map((i) => partial(i, viewApiVersion(out, 'v1'))),
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
    noHeaders: parseBool(q, 'noHeaders') === true,
  });
  t.apiVersion = viewApiVersion(out, 'v1beta1');
  if (out.viewGroup && out.viewGroup !== 'meta.platform') {
    // The rows' metadata-only objects in the same spelling as the Table.
    const rowVersion = viewApiVersion({ ...out, viewVersion: 'v1' }, 'v1');
    for (const row of t.rows) {
      if (row.object && row.object.kind === 'PartialObjectMetadata') row.object.apiVersion = rowVersion;
    }
  }
  return t;
}
