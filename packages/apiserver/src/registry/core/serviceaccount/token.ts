/**
 * `serviceaccounts/<name>/token` (model: Kubernetes 1.21 `pkg/registry/core/serviceaccount/storage/token.go`):
 * POST a TokenRequest to get a signed token for the service account, optionally bound to a Pod (that runs as the
 * service account) or a Secret in the same namespace. The token is valid for `spec.audiences` (the API server's
 * audiences when empty) and `spec.expirationSeconds` (at least 10 minutes, at most 2^32 s, shortened to
 * `--service-account-max-token-expiration`). Nothing is stored.
 */
import {
  type ApiObject,
  badRequest,
  conflict,
  FieldPath,
  field,
  type FieldError,
  invalid,
  type Pod,
  type ServiceAccount,
  type TokenRequest,
} from '@platform/api';

import { type NamedRef, type ServiceAccountTokenIssuer } from '../../../auth/authentication/service-account';
import { type GenericStore } from '../../generic/store';
import {
  type Creater,
  type NamedCreater,
  type RequestContext,
  type RestStorage,
  type ValidateObjectFunc,
  type WriteOptions,
} from '../../rest/rest';

const MIN_SECONDS = 600;
const MAX_SECONDS = 2 ** 32;

/** Validation of a TokenRequest (model: `ValidateTokenRequest`). */
export function validateTokenRequest(tr: TokenRequest): FieldError[] {
  const errs: FieldError[] = [];
  const path = new FieldPath('spec', 'expirationSeconds');
  const s = tr.spec?.expirationSeconds;
  if (s !== undefined && s !== null) {
    if (s < MIN_SECONDS) errs.push(field.invalid(path, s, 'may not specify a duration less than 10 minutes'));
    if (s > MAX_SECONDS) errs.push(field.invalid(path, s, 'may not specify a duration larger than 2^32 seconds'));
  }
  return errs;
}

/** The storage of `serviceaccounts/token`: create only. */
export class TokenREST implements Creater, NamedCreater, RestStorage {
  /**
   * @param serviceAccounts the service accounts' main store
   * @param storeOf the main store of another core resource (pods, secrets); undefined when not served
   */
  constructor(
    readonly kind: RestStorage['kind'],
    private readonly serviceAccounts: GenericStore,
    private readonly issuer: ServiceAccountTokenIssuer,
    private readonly storeOf: (resource: string) => GenericStore | undefined,
  ) {}

  create(
    ctx: RequestContext,
    obj: ApiObject,
    validate: ValidateObjectFunc | undefined,
    o: WriteOptions,
  ): Promise<ApiObject> {
    return this.createNamed(ctx, obj.metadata?.name ?? '', obj, validate, o);
  }

  async createNamed(
    ctx: RequestContext,
    name: string,
    obj: ApiObject,
    validate: ValidateObjectFunc | undefined,
    _o: WriteOptions,
  ): Promise<ApiObject> {
    const tr = structuredClone(obj) as TokenRequest;
    if (!name) throw badRequest('the name of the service account is required');
    const errs = validateTokenRequest(tr);
    if (errs.length) throw invalid({ group: 'authentication.platform', kind: 'TokenRequest' }, name, errs);
    if (validate) await validate(tr);
    const sa = (await this.serviceAccounts.get(ctx, name, {})) as ServiceAccount;
    const namespace = ctx.namespace;
    let pod: NamedRef | undefined;
    let secret: NamedRef | undefined;
    const ref = tr.spec?.boundObjectRef;
    if (ref) {
      const refName = ref.name ?? '';
      const apiVersion = ref.apiVersion ?? '';
      const core = apiVersion === 'v1' || apiVersion === '';
      let uid: string;
      if (core && ref.kind === 'Pod') {
        const p = (await this.require('pods', ctx, refName)) as Pod;
        if ((p.spec?.serviceAccountName ?? 'default') !== name)
          throw badRequest(
            `cannot bind token for serviceaccount ${JSON.stringify(name)} to pod running with different serviceaccount name.`,
          );
        uid = p.metadata?.uid ?? '';
        pod = { name: refName, uid };
      } else if (core && ref.kind === 'Secret') {
        const s = await this.require('secrets', ctx, refName);
        uid = s.metadata?.uid ?? '';
        secret = { name: refName, uid };
      } else {
        const gv = apiVersion === '' ? '/' : apiVersion.includes('/') ? apiVersion : `/${apiVersion}`;
        throw badRequest(`cannot bind token to object of type ${gv}, Kind=${ref.kind ?? ''}`);
      }
      if (ref.uid && ref.uid !== uid)
        throw conflict(
          { group: '', resource: ref.kind },
          refName,
          `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
        );
    }
    const spec = (tr.spec ??= {});
    if (!spec.audiences || spec.audiences.length === 0) spec.audiences = [...this.issuer.apiAudiences];
    spec.expirationSeconds ??= 3600;
    const issued = this.issuer.issue({
      namespace,
      serviceAccount: { name, uid: sa.metadata?.uid ?? '' },
      audiences: spec.audiences,
      expirationSeconds: spec.expirationSeconds,
      ...(pod ? { pod } : {}),
      ...(secret ? { secret } : {}),
    });
    const max = this.issuer.c.maxExpirationSeconds;
    if (max !== undefined && max > 0 && spec.expirationSeconds > max) spec.expirationSeconds = max;
    tr.apiVersion = this.kind.apiVersion;
    tr.kind = this.kind.kind;
    tr.metadata = { ...tr.metadata, name, namespace };
    tr.status = {
      token: issued.token,
      expirationTimestamp: new Date(Math.floor(issued.expiresAtMs / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
    };
    return tr as ApiObject;
  }

  private async require(resource: string, ctx: RequestContext, name: string): Promise<ApiObject> {
    const store = this.storeOf(resource);
    if (!store) throw badRequest(`${resource} are not served: cannot bind a token to one`);
    return store.get(ctx, name, {});
  }
}
