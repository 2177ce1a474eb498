/**
 * PATCH (model: apiserver `pkg/endpoints/handlers/patch.go`): the patch is applied to the current object inside the
 * registry's update loop (so a concurrent write makes it apply again to the newer object, never lose that write),
 * then the result is decoded, defaulted, admitted and validated like the body of a PUT. A patch that does not name
 * `metadata.resourceVersion` is applied unconditionally; one that does must match (409 otherwise).
 *
 * Server-side apply (`application/apply-patch+yaml`, behind the ServerSideApply gate) merges the configuration into
 * the object through the field manager (conflicts are 409 unless `force=true`) and, unlike the other patch types,
 * creates the object when it does not exist (201). Every patch type records its manager in `metadata.managedFields`.
 */
import {
  type ApiObject,
  badRequest,
  FieldPath,
  field,
  invalid,
  isAlreadyExists,
  isNotFound,
  notFound,
  StatusError,
} from '@platform/api';

import { capabilities, type Creater, type RequestContext, type Updater } from '../../registry/rest/rest';
import { dropUnreadableManagedFields, type FieldManager } from '../../patch/apply/field-manager';
import { isPatchError, jsonPatch, mergePatch, strategicMergePatch } from '../../patch/patch';
import { negotiatePatch, type PatchType } from '../negotiation/negotiate';
import { writeObject } from '../responses/writers';
import { decodeObject, loadYaml, parseJson, readBody } from './body';
import { isPretty, parseBool, parseDryRun, parseFieldManager, type Query } from './options';
import { checkName, fieldManagerOf, trackUpdate, type VerbRequest } from './verbs';

/** The patch types served without server-side apply (the gate off, or an endpoint that keeps no managed fields). */
const SERVED: readonly PatchType[] = ['json', 'merge', 'strategic'];
/** The patch types served with server-side apply. */
const SERVED_WITH_APPLY: readonly PatchType[] = [...SERVED, 'apply'];

/** How many times an apply retries when the object appears or disappears under it. */
const APPLY_ATTEMPTS = 3;

/** `force`: true or false (only valid for apply); anything else is 400. */
function parseForce(q: Query): boolean | undefined {
  if (q.get('force') === null) return undefined;
  return parseBool(q, 'force') ?? false;
}

/** The PatchOptions checks of Kubernetes' `ValidatePatchOptions`: 422 Invalid naming each problem. */
function validatePatchOptions(type: PatchType, fieldManager: string | undefined, force: boolean | undefined): void {
  const errs = [];
  if (type !== 'apply' && force !== undefined) {
    errs.push(field.forbidden(new FieldPath('force'), 'may not be specified for non-apply patch'));
  }
  if (type === 'apply' && !fieldManager) {
    errs.push(field.required(new FieldPath('fieldManager'), 'is required for apply patch'));
  }
  if (errs.length) throw invalid({ group: 'meta.platform', kind: 'PatchOptions' }, '', errs);
}

function parsePatch(type: PatchType, body: Buffer): unknown {
  if (type === 'apply') {
    const value = loadYaml(body, 'error decoding YAML');
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw badRequest('error decoding YAML: the apply configuration must be an object');
    }
    return value;
  }
  return parseJson(body);
}

function applyPatch(type: PatchType, current: ApiObject, patch: unknown, schemaId: string): unknown {
  try {
    switch (type) {
      case 'json':
        return jsonPatch(current, patch);
      case 'merge':
        return mergePatch(current, patch);
      default:
        return strategicMergePatch(current, patch, schemaId);
    }
  } catch (err) {
    if (!isPatchError(err)) throw err;
    if (err.badRequest) throw badRequest(`the patch is not valid: ${err.message}`);
    throw new StatusError({ code: 422, reason: 'Invalid', message: `the patch cannot be applied: ${err.message}` });
  }
}

/** PATCH of one object. */
export async function patchHandler(r: VerbRequest): Promise<void> {
  const s = r.scope.storage;
  if (!capabilities.updater(s)) {
    throw new StatusError({
      code: 405,
      reason: 'MethodNotAllowed',
      message: `patch is not supported on resources of kind "${r.scope.resource}"`,
    });
  }
  const fm = fieldManagerOf(r.scope);
  const served = fm ? SERVED_WITH_APPLY : SERVED;
  // Custom objects have no patch strategies: strategic merge patch is 415, as in 1.21.
  const type = negotiatePatch(
    r.req.headers['content-type'],
    r.scope.unstructured ? served.filter((t) => t !== 'strategic') : served,
  );
  const dryRun = parseDryRun(r.query, 'PatchOptions');
  const fieldManager = parseFieldManager(r.query, 'PatchOptions');
  const force = parseForce(r.query);
  validatePatchOptions(type, fieldManager, force);
  const patch = parsePatch(type, await readBody(r.req, r.scope.maxRequestBodyBytes));
  if (type === 'apply') {
    await applyHandler(r, s, fm as FieldManager, patch, fieldManager as string, force ?? false, dryRun);
    return;
  }
  const gr = { group: r.scope.resourceKind.group, resource: r.scope.resource };
  const result = await s.update(
    r.ctx,
    {
      name: r.name,
      updatedObject: async (_ctx, current) => {
        if (!current) throw notFound(gr, r.name);
        const patched = applyPatch(type, current, patch, r.scope.kind.schema.$id as string);
        dropUnreadableManagedFields(patched);
        const decoded = decodeObject(patched, r.scope.kind);
        checkName(r, decoded);
        const obj = trackUpdate(r, current, decoded, fieldManager);
        await r.scope.admission.admit(r.ctx, 'UPDATE', obj, current, r.scope, dryRun);
        return obj;
      },
    },
    undefined,
    (obj, old) => r.scope.admission.validate(r.ctx, 'UPDATE', obj, old, r.scope, dryRun),
    { dryRun, fieldManager },
  );
  writeObject(r.res, 200, result.object, r.output.format, r.scope.serializers, isPretty(r.query));
}

/**
 * Server-side apply: the configuration merged into the current object by the field manager, then defaulted,
 * admitted and validated like any update. A missing object is created from the configuration, also for resources
 * whose PUT does not create (Kubernetes forces create-on-update for apply); when the object appears or disappears
 * meanwhile, the apply starts again.
 */
async function applyHandler(
  r: VerbRequest,
  s: Updater,
  fm: FieldManager,
  config: unknown,
  manager: string,
  force: boolean,
  dryRun: boolean,
): Promise<void> {
  const build = async (ctx: RequestContext, current: ApiObject | undefined): Promise<ApiObject> => {
    const obj = decodeObject(fm.apply(current, config, manager, force), r.scope.kind);
    await r.scope.admission.admit(ctx, current ? 'UPDATE' : 'CREATE', obj, current, r.scope, dryRun);
    return obj;
  };
  const validate =
    (op: 'CREATE' | 'UPDATE') =>
    (obj: ApiObject, old?: ApiObject): Promise<void> =>
      r.scope.admission.validate(r.ctx, op, obj, old, r.scope, dryRun);
  const storage = r.scope.storage;
  const creater: Creater | undefined = capabilities.creater(storage) ? storage : undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await s.update(
        r.ctx,
        { name: r.name, updatedObject: build },
        validate('CREATE'),
        validate('UPDATE'),
        { dryRun, fieldManager: manager },
      );
      writeObject(
        r.res,
        result.created ? 201 : 200,
        result.object,
        r.output.format,
        r.scope.serializers,
        isPretty(r.query),
      );
      return;
    } catch (err) {
      if (!isNotFound(err) || !creater || attempt >= APPLY_ATTEMPTS) throw err;
    }
    const obj = await build(r.ctx, undefined);
    const m = (obj.metadata ??= {});
    if (m.name && m.name !== r.name) {
      throw badRequest(`the name of the object (${m.name}) does not match the name on the URL (${r.name})`);
    }
    m.name = r.name;
    try {
      const created = await creater.create(r.ctx, obj, validate('CREATE'), { dryRun, fieldManager: manager });
      writeObject(r.res, 201, created, r.output.format, r.scope.serializers, isPretty(r.query));
      return;
    } catch (err) {
      if (!isAlreadyExists(err) || attempt >= APPLY_ATTEMPTS) throw err;
    }
  }
}
