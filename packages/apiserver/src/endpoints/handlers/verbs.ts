/**
 * The handlers of the resource verbs (model: apiserver `pkg/endpoints/handlers/{get,create,update,delete}.go`).
 * Each one: parse the query → negotiate → decode the body → admission → registry → write. Errors are thrown and
 * written as a Status by the dispatcher, which also negotiated the output format before calling in.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';

import {
  type ApiObject,
  badRequest,
  decodeInto,
  DeleteOptionsSchema,
  type DeleteOptions,
  methodNotSupported,
} from '@platform/api';

import {
  capabilities,
  type DeleteRequest,
  type RequestContext,
  type ValidateObjectFunc,
} from '../../registry/rest/rest';
import { negotiateInput, type OutputFormat } from '../negotiation/negotiate';
import { writeObject } from '../responses/writers';
import { parseBody, readBody, readObject } from './body';
import {
  dryRunFromValues,
  isPretty,
  parseDryRun,
  parseFieldManager,
  parseGracePeriod,
  parseListOptions,
  parsePropagationPolicy,
  type Query,
} from './options';
import { type RequestScope } from './scope';
import { listView, objectView } from './views';

/** Everything a verb handler gets. */
export interface VerbRequest {
  req: IncomingMessage;
  res: ServerResponse;
  ctx: RequestContext;
  scope: RequestScope;
  query: Query;
  output: OutputFormat;
  /** The object name from the path ('' for collection verbs). */
  name: string;
}

function unsupported(r: VerbRequest, verb: string): never {
  throw methodNotSupported({ group: r.scope.kind.group, resource: r.scope.resource }, verb);
}

function write(r: VerbRequest, code: number, obj: ApiObject): void {
  writeObject(r.res, code, obj, r.output.format, r.scope.serializers, isPretty(r.query));
}

function validator(r: VerbRequest, op: 'CREATE' | 'UPDATE' | 'DELETE', dryRun: boolean): ValidateObjectFunc {
  return (obj, old) => r.scope.admission.validate(r.ctx, op, obj, old, r.scope, dryRun);
}

/** GET of one object. */
export async function getHandler(r: VerbRequest): Promise<void> {
  const s = r.scope.storage;
  if (!capabilities.getter(s)) unsupported(r, 'get');
  const rv = r.query.get('resourceVersion') ?? undefined;
  if (rv && !/^\d+$/.test(rv))
    throw badRequest(`invalid resource version ${JSON.stringify(rv)}: must be a non-negative integer`);
  const obj = await s.get(r.ctx, r.name, { resourceVersion: rv });
  write(r, 200, objectView(obj, r.output, r.scope, r.query) as ApiObject);
}

/** GET of a collection (not a watch). */
export async function listHandler(r: VerbRequest): Promise<void> {
  const s = r.scope.storage;
  if (!capabilities.lister(s)) unsupported(r, 'list');
  const o = parseListOptions(r.query, false);
  const list = await s.list(r.ctx, o);
  write(r, 200, listView(list, r.output, r.scope, r.query) as ApiObject);
}

/** POST: create. */
export async function createHandler(r: VerbRequest): Promise<void> {
  const s = r.scope.storage;
  if (!capabilities.creater(s)) unsupported(r, 'create');
  const dryRun = parseDryRun(r.query, 'CreateOptions');
  const fieldManager = parseFieldManager(r.query, 'CreateOptions');
  const obj = await readObject(r.req, r.scope.kind, r.scope.serializers, r.scope.maxRequestBodyBytes);
  if (r.name && obj.metadata?.name && obj.metadata.name !== r.name) {
    throw badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${r.name})`);
  }
  await r.scope.admission.admit(r.ctx, 'CREATE', obj, undefined, r.scope, dryRun);
  const created = await s.create(r.ctx, obj, validator(r, 'CREATE', dryRun), { dryRun, fieldManager });
  write(r, 201, created);
}

/** PUT: update (or create, where the resource allows it). */
export async function updateHandler(r: VerbRequest): Promise<void> {
  const s = r.scope.storage;
  if (!capabilities.updater(s)) unsupported(r, 'update');
  const dryRun = parseDryRun(r.query, 'UpdateOptions');
  const fieldManager = parseFieldManager(r.query, 'UpdateOptions');
  const obj = await readObject(r.req, r.scope.kind, r.scope.serializers, r.scope.maxRequestBodyBytes);
  const result = await s.update(
    r.ctx,
    {
      name: r.name,
      updatedObject: async (_ctx, current) => {
        const next = structuredClone(obj);
        await r.scope.admission.admit(r.ctx, current ? 'UPDATE' : 'CREATE', next, current, r.scope, dryRun);
        return next;
      },
    },
    validator(r, 'CREATE', dryRun),
    validator(r, 'UPDATE', dryRun),
    { dryRun, fieldManager },
  );
  write(r, result.created ? 201 : 200, result.object);
}

/** The DeleteOptions of a DELETE: the optional body, then the query parameters (which win, as in Kubernetes). */
async function deleteOptions(r: VerbRequest): Promise<DeleteRequest> {
  let o: DeleteOptions = {};
  const body = await readBody(r.req, r.scope.maxRequestBodyBytes);
  if (body.length > 0) {
    const value = parseBody(body, negotiateInput(r.req.headers['content-type']), r.scope.serializers) as DeleteOptions;
    if (value && typeof value === 'object' && value.kind !== undefined && value.kind !== 'DeleteOptions') {
      throw badRequest(`the kind in the data (${String(value.kind)}) does not match the expected kind (DeleteOptions)`);
    }
    const d = decodeInto<DeleteOptions>(DeleteOptionsSchema.$id as string, value);
    if (!d.ok) throw badRequest(`DeleteOptions cannot be decoded: ${d.errors.join('; ')}`);
    o = d.value;
  }
  const grace = parseGracePeriod(r.query);
  if (grace !== undefined) o.gracePeriodSeconds = grace;
  const policy = parsePropagationPolicy(r.query);
  if (policy) o.propagationPolicy = policy;
  if (o.orphanDependents !== undefined && o.propagationPolicy !== undefined) {
    throw badRequest('orphanDependents and propagationPolicy cannot be both set');
  }
  const dryRun = parseDryRun(r.query, 'DeleteOptions') || dryRunFromValues(o.dryRun ?? [], 'DeleteOptions');
  const { dryRun: _values, apiVersion: _v, kind: _k, ...rest } = o;
  return { ...rest, dryRun };
}

/** DELETE of one object: 200 when it is gone, 202 when finalizers or a grace period keep it for now. */
export async function deleteHandler(r: VerbRequest): Promise<void> {
  const s = r.scope.storage;
  if (!capabilities.deleter(s)) unsupported(r, 'delete');
  const o = await deleteOptions(r);
  const result = await s.delete(r.ctx, r.name, validator(r, 'DELETE', o.dryRun), o);
  write(r, result.deleted ? 200 : 202, result.object as ApiObject);
}

/** DELETE of a collection: the deleted objects, as a list. */
export async function deleteCollectionHandler(r: VerbRequest): Promise<void> {
  const s = r.scope.storage;
  if (!capabilities.collectionDeleter(s)) unsupported(r, 'deletecollection');
  const listOptions = parseListOptions(r.query, false);
  const o = await deleteOptions(r);
  const list = await s.deleteCollection(r.ctx, validator(r, 'DELETE', o.dryRun), o, listOptions);
  write(r, 200, list as ApiObject);
}
