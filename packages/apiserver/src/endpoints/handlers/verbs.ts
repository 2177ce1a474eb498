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
import {
  clearManagedFields,
  dropUnreadableManagedFields,
  FieldManager,
  managerOrUserAgent,
} from '../../patch/apply/field-manager';
import { negotiateInput, type OutputFormat } from '../negotiation/negotiate';
import { writeList, writeObject } from '../responses/writers';
import { decodeObject, parseBody, readBody } from './body';
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
  // The registry passes a delete the stored object: admission sees it as the old object, with no new one.
  if (op === 'DELETE') return (obj) => r.scope.admission.validate(r.ctx, op, undefined, obj, r.scope, dryRun);
  return (obj, old) => r.scope.admission.validate(r.ctx, op, obj, old, r.scope, dryRun);
}

/**
 * The field manager of a scope's writes: undefined when managed fields are not kept there (the ServerSideApply
 * gate is off, nothing is stored, or the endpoint reads and writes another kind than its resource, except `scale`,
 * whose storage moves the ownership of replicas between the Scale and its parent).
 */
export function fieldManagerOf(scope: RequestScope): FieldManager | undefined {
  const k = scope.kind;
  const sameKind = k.kind === scope.resourceKind.kind && k.apiVersion === scope.resourceKind.apiVersion;
  const isScale = scope.subresource === 'scale' && k.kind === 'Scale';
  if (scope.serverSideApply === false || !(sameKind || isScale)) return undefined;
  if (k.spec.persisted === false && !isScale) return undefined;
  // A custom object is read through its CRD version's schema; a Scale of one through the Scale's.
  return new FieldManager(k, scope.now, sameKind ? scope.unstructured?.applySchema : undefined);
}

/**
 * Records a create or update (`live` undefined on create) of `obj` in its managed fields, for the manager the
 * request names (or its User-Agent); with the ServerSideApply gate off, managed fields are cleared instead, as
 * Kubernetes does. Returns the object to write.
 */
export function trackUpdate<T extends ApiObject>(
  r: VerbRequest,
  live: ApiObject | undefined,
  obj: T,
  fieldManager: string | undefined,
): T {
  if (r.scope.serverSideApply === false) {
    clearManagedFields(obj);
    return obj;
  }
  const fm = fieldManagerOf(r.scope);
  if (!fm) return obj;
  return fm.update(live, obj, managerOrUserAgent(fieldManager, r.req.headers['user-agent']));
}

/** Reads and decodes the body of a create or update; managed fields that cannot be read are dropped first. */
async function readRequestObject(r: VerbRequest): Promise<ApiObject> {
  const body = await readBody(r.req, r.scope.maxRequestBodyBytes);
  const value = parseBody(body, negotiateInput(r.req.headers['content-type']), r.scope.serializers);
  dropUnreadableManagedFields(value);
  return decodeObject(value, r.scope.kind);
}

/**
 * 400 unless the object names the object of the URL (model: `checkName` of the update and patch handlers): the same
 * name, and no other namespace (an object without one takes the URL's).
 */
export function checkName(r: VerbRequest, obj: ApiObject): void {
  const name = obj.metadata?.name ?? '';
  if (name !== r.name) {
    throw badRequest(`the name of the object (${name}) does not match the name on the URL (${r.name})`);
  }
  const namespace = obj.metadata?.namespace ?? '';
  if (r.ctx.namespace && namespace && namespace !== r.ctx.namespace) {
    throw badRequest(
      `the namespace of the object (${namespace}) does not match the namespace on the URL (${r.ctx.namespace})`,
    );
  }
}

/** GET of one object. */
export async function getHandler(r: VerbRequest): Promise<void> {
  const s = r.scope.storage;
  if (!capabilities.getter(s)) unsupported(r, 'get');
  const rv = r.query.get('resourceVersion') ?? undefined;
  if (rv && !/^\d+$/.test(rv))
    throw badRequest(`invalid resource version ${JSON.stringify(rv)}: must be a non-negative integer`);
  // Only read from here on: the watch cache's copy (and its encoding) will do when it is the stored object.
  const obj = await s.get(r.ctx, r.name, { resourceVersion: rv, shared: true });
  write(r, 200, objectView(obj, r.output, r.scope, r.query) as ApiObject);
}

/** GET of a collection (not a watch). */
export async function listHandler(r: VerbRequest): Promise<void> {
  const s = r.scope.storage;
  if (!capabilities.lister(s)) unsupported(r, 'list');
  const o = parseListOptions(r.query, false);
  const list = await s.list(r.ctx, { ...o, shared: true });
  // Streamed: a list of thousands of objects is written as the client takes it, not built whole first.
  await writeList(
    r.res,
    200,
    listView(list, r.output, r.scope, r.query) as ApiObject,
    r.output.format,
    r.scope.serializers,
    isPretty(r.query),
  );
}

/** POST: create. */
export async function createHandler(r: VerbRequest): Promise<void> {
  const s = r.scope.storage;
  if (!capabilities.creater(s)) unsupported(r, 'create');
  const dryRun = parseDryRun(r.query, 'CreateOptions');
  const fieldManager = parseFieldManager(r.query, 'CreateOptions');
  const read = await readRequestObject(r);
  if (r.name && read.metadata?.name && read.metadata.name !== r.name) {
    throw badRequest(`the name of the object (${read.metadata.name}) does not match the name on the URL (${r.name})`);
  }
  const obj = trackUpdate(r, undefined, read, fieldManager);
  await r.scope.admission.admit(r.ctx, 'CREATE', obj, undefined, r.scope, dryRun);
  const validate = validator(r, 'CREATE', dryRun);
  const created =
    r.name && capabilities.namedCreater(s)
      ? await s.createNamed(r.ctx, r.name, obj, validate, { dryRun, fieldManager })
      : await s.create(r.ctx, obj, validate, { dryRun, fieldManager });
  write(r, 201, created);
}

/** PUT: update (or create, where the resource allows it). */
export async function updateHandler(r: VerbRequest): Promise<void> {
  const s = r.scope.storage;
  if (!capabilities.updater(s)) unsupported(r, 'update');
  const dryRun = parseDryRun(r.query, 'UpdateOptions');
  const fieldManager = parseFieldManager(r.query, 'UpdateOptions');
  const obj = await readRequestObject(r);
  checkName(r, obj);
  const result = await s.update(
    r.ctx,
    {
      name: r.name,
      updatedObject: async (_ctx, current) => {
        const next = trackUpdate(r, current, structuredClone(obj), fieldManager);
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

/**
 * DELETE of one object. 200, also when finalizers or a grace period keep the object for now; 202 only when it is kept
 * and the client asked for cascading deletion with `orphanDependents: false` (as Kubernetes answers, which keeps 200
 * for the other cases so as not to break clients).
 */
export async function deleteHandler(r: VerbRequest): Promise<void> {
  const s = r.scope.storage;
  if (!capabilities.deleter(s)) unsupported(r, 'delete');
  const o = await deleteOptions(r);
  await r.scope.admission.admit(r.ctx, 'DELETE', undefined, undefined, r.scope, o.dryRun, r.name);
  const result = await s.delete(r.ctx, r.name, validator(r, 'DELETE', o.dryRun), o);
  write(r, !result.deleted && o.orphanDependents === false ? 202 : 200, result.object as ApiObject);
}

/** DELETE of a collection: the deleted objects, as a list. */
export async function deleteCollectionHandler(r: VerbRequest): Promise<void> {
  const s = r.scope.storage;
  if (!capabilities.collectionDeleter(s)) unsupported(r, 'deletecollection');
  const listOptions = parseListOptions(r.query, false);
  const o = await deleteOptions(r);
  await r.scope.admission.admit(r.ctx, 'DELETE', undefined, undefined, r.scope, o.dryRun);
  const list = await s.deleteCollection(r.ctx, validator(r, 'DELETE', o.dryRun), o, listOptions);
  write(r, 200, list as ApiObject);
}
