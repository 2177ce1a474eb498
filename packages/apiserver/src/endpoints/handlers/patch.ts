/**
 * PATCH (model: apiserver `pkg/endpoints/handlers/patch.go`): the patch is applied to the current object inside the
 * registry's update loop (so a concurrent write makes it apply again to the newer object, never lose that write),
 * then the result is decoded, defaulted, admitted and validated like the body of a PUT. A patch that does not name
 * `metadata.resourceVersion` is applied unconditionally; one that does must match (409 otherwise).
 */
import { type ApiObject, badRequest, notFound, StatusError } from '@platform/api';

import { capabilities } from '../../registry/rest/rest';
import { isPatchError, jsonPatch, mergePatch, strategicMergePatch } from '../../patch/patch';
import { negotiatePatch, type PatchType } from '../negotiation/negotiate';
import { writeObject } from '../responses/writers';
import { decodeObject, readBody } from './body';
import { isPretty, parseDryRun, parseFieldManager } from './options';
import { type VerbRequest } from './verbs';

/** The patch types served. Server-side apply (`application/apply-patch+yaml`) is not served yet: 415 names the others. */
const SERVED: readonly PatchType[] = ['json', 'merge', 'strategic'];

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
  const type = negotiatePatch(r.req.headers['content-type'], SERVED);
  const dryRun = parseDryRun(r.query, 'PatchOptions');
  const fieldManager = parseFieldManager(r.query, 'PatchOptions');
  const body = await readBody(r.req, r.scope.maxRequestBodyBytes);
  let patch: unknown;
  try {
    patch = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw badRequest(`the body of the request is not valid JSON: ${(err as Error).message}`);
  }
  const gr = { group: r.scope.resourceKind.group, resource: r.scope.resource };
  const result = await s.update(
    r.ctx,
    {
      name: r.name,
      updatedObject: async (_ctx, current) => {
        if (!current) throw notFound(gr, r.name);
        const patched = applyPatch(type, current, patch, r.scope.kind.schema.$id as string);
        const obj = decodeObject(patched, r.scope.kind);
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
