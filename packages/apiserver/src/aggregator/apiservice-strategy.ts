/**
 * The APIService strategy (model: kube-aggregator 1.21 `pkg/registry/apiservice/strategy.go` and
 * `pkg/apis/apiregistration/validation/validation.go`): the name is `<version>.<group>`; a local APIService (no
 * service) has neither a CA bundle nor insecureSkipTLSVerify; a service reference names a namespace, a name and a
 * valid port; a CA bundle and insecureSkipTLSVerify exclude each other; groupPriorityMinimum is in 1-20000 and
 * versionPriority in 1-1000. A local APIService is created `Available` (nothing needs checking).
 */
import {
  type APIService,
  type APIServiceCondition,
  type ApiObject,
  type FieldError,
  FieldPath,
  field,
  isDNS1035Label,
  isDNS1123Subdomain,
  isValidPortNum,
  type Kind,
} from '@platform/api';

import { defaultStrategy, statusStrategy } from '../registry/generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../registry/rest/rest';

/** The condition a local APIService is created with (`NewLocalAvailableAPIServiceCondition`). */
export function localAvailableCondition(now: number): APIServiceCondition {
  return {
    type: 'Available',
    status: 'True',
    lastTransitionTime: new Date(Math.floor(now / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
    reason: 'Local',
    message: 'Local APIServices are always available',
  };
}

/** Every problem of an APIService's name and spec (`ValidateAPIService`, without the generic metadata rules). */
export function validateAPIService(o: APIService): FieldError[] {
  const errs: FieldError[] = [];
  const spec = o.spec ?? { groupPriorityMinimum: 0, versionPriority: 0 };
  const group = spec.group ?? '';
  const version = spec.version ?? '';
  const required = `${version}.${group}`;
  const name = o.metadata?.name ?? '';
  if (name !== '' && name !== required)
    errs.push(
      field.invalid(new FieldPath('metadata', 'name'), name, `must be \`spec.version+"."+spec.group\`: "${required}"`),
    );
  const path = new FieldPath('spec');
  if (group === '' && version !== 'v1')
    errs.push(field.required(path.child('group'), 'only v1 may have an empty group and it better be legacy kube'));
  if (group !== '') errs.push(...field.invalidEach(path.child('group'), group, isDNS1123Subdomain(group)));
  errs.push(...field.invalidEach(path.child('version'), version, isDNS1035Label(version)));
  if (spec.groupPriorityMinimum <= 0 || spec.groupPriorityMinimum > 20000)
    errs.push(
      field.invalid(
        path.child('groupPriorityMinimum'),
        spec.groupPriorityMinimum,
        'must be positive and less than 20000',
      ),
    );
  if (spec.versionPriority <= 0 || spec.versionPriority > 1000)
    errs.push(
      field.invalid(path.child('versionPriority'), spec.versionPriority, 'must be positive and less than 1000'),
    );
  const caBundleBytes = spec.caBundle ? Buffer.from(spec.caBundle, 'base64').length : 0;
  if (!spec.service) {
    if (caBundleBytes > 0)
      errs.push(
        field.invalid(path.child('caBundle'), `${caBundleBytes} bytes`, 'local APIServices may not have a caBundle'),
      );
    if (spec.insecureSkipTLSVerify)
      errs.push(
        field.invalid(
          path.child('insecureSkipTLSVerify'),
          true,
          'local APIServices may not have insecureSkipTLSVerify',
        ),
      );
    return errs;
  }
  const service = path.child('service');
  if (!spec.service.namespace) errs.push(field.required(service.child('namespace')));
  if (!spec.service.name) errs.push(field.required(service.child('name')));
  const port = spec.service.port ?? 443;
  const portErrs = isValidPortNum(port);
  if (portErrs.length)
    errs.push(field.invalid(service.child('port'), port, `port is not valid: ${portErrs.join(', ')}`));
  if (spec.insecureSkipTLSVerify && caBundleBytes > 0)
    errs.push(field.invalid(path.child('insecureSkipTLSVerify'), true, 'may not be true if caBundle is present'));
  return errs;
}

/** Problems of a status written through `apiservices/<name>/status` (`ValidateAPIServiceStatus`). */
export function validateAPIServiceStatus(o: APIService): FieldError[] {
  const errs: FieldError[] = [];
  const conditions = new FieldPath('status', 'conditions');
  (o.status?.conditions ?? []).forEach((c, i) => {
    if (!['True', 'False', 'Unknown'].includes(c.status))
      errs.push(field.notSupported(conditions.index(i).child('status'), c.status, ['True', 'False', 'Unknown']));
  });
  return errs;
}

/** The strategy of `apiservices` (v1 and v1beta1). */
export function apiServiceStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  const validate = (_ctx: unknown, obj: ApiObject): FieldError[] => validateAPIService(obj as APIService);
  return defaultStrategy(kind, {
    validate,
    validateUpdate: validate,
    prepareForCreate(ctx, obj) {
      // A local APIService is available at once: nothing needs checking (strategy.go's PrepareForCreate).
      const o = obj as APIService;
      if (!o.spec?.service) o.status = { conditions: [localAvailableCondition(ctx.now())] };
    },
  });
}

/** The strategy of `apiservices/status`. */
export function apiServiceStatusStrategy(): UpdateStrategy {
  return statusStrategy({ validateUpdate: (_ctx, obj) => validateAPIServiceStatus(obj as APIService) });
}
