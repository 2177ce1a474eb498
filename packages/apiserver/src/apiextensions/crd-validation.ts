/**
 * Validation of CustomResourceDefinitions (model: Kubernetes 1.21's
 * `apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go`), with its messages and field paths.
 * The schema itself is checked by the structural-schema machinery (`./schema`).
 */
import {
  type CustomResourceDefinition,
  type CustomResourceDefinitionVersion,
  type FieldError,
  FieldPath,
  field,
  isDNS1035Label,
  isDNS1123Subdomain,
} from '@platform/api';

import { validateCRDSchema } from './schema';
import { parseFieldPath } from './jsonpath';

const COLUMN_TYPES = ['integer', 'number', 'string', 'boolean', 'date'];
const COLUMN_FORMATS = ['int32', 'int64', 'float', 'double', 'byte', 'date', 'date-time', 'password'];
const CONVERSION_REVIEW_VERSIONS = ['v1', 'v1beta1'];

function label(path: FieldPath, value: string | undefined, what = ''): FieldError[] {
  if (!value) return [field.required(path, what)];
  return isDNS1035Label(value).map((m) => field.invalid(path, value, m));
}

function lowercaseLabel(path: FieldPath, value: string | undefined): FieldError[] {
  if (value === undefined || value === '') return [];
  return isDNS1035Label(value).map((m) => field.invalid(path, value, m));
}

/** The names of a CRD (spec.names or status.acceptedNames). */
export function validateNames(
  names: CustomResourceDefinition['spec']['names'] | undefined,
  path: FieldPath,
): FieldError[] {
  const errs: FieldError[] = [];
  if (!names) return [field.required(path, '')];
  errs.push(...label(path.child('plural'), names.plural));
  errs.push(...lowercaseLabel(path.child('singular'), names.singular));
  if (!names.kind) errs.push(field.required(path.child('kind'), 'kind must be specified'));
  else
    errs.push(...isDNS1035Label(names.kind.toLowerCase()).map((m) => field.invalid(path.child('kind'), names.kind, m)));
  if (names.listKind) {
    errs.push(
      ...isDNS1035Label(names.listKind.toLowerCase()).map((m) =>
        field.invalid(path.child('listKind'), names.listKind, m),
      ),
    );
    if (names.listKind === names.kind)
      errs.push(field.invalid(path.child('listKind'), names.listKind, 'kind and listKind cannot be the same'));
  }
  (names.shortNames ?? []).forEach((s, i) => errs.push(...lowercaseLabel(path.child('shortNames').index(i), s)));
  (names.categories ?? []).forEach((c, i) => errs.push(...lowercaseLabel(path.child('categories').index(i), c)));
  return errs;
}

function validatePath(p: FieldPath, value: string | undefined, under: string[], what: string): FieldError[] {
  if (value === undefined) return [];
  const parsed = parseFieldPath(value);
  if (!parsed) return [field.invalid(p, value, 'must be a valid JSON path')];
  if (!under.includes(parsed[0] ?? ''))
    return [field.invalid(p, value, `should be a json path under ${under.map((u) => `.${u}`).join(' or ')}`)];
  void what;
  return [];
}

function validateVersion(
  crd: CustomResourceDefinition,
  v: CustomResourceDefinitionVersion,
  path: FieldPath,
): FieldError[] {
  const errs: FieldError[] = [];
  errs.push(...label(path.child('name'), v.name));
  if (v.deprecationWarning !== undefined && v.deprecationWarning !== null) {
    if (!v.deprecated)
      errs.push(
        field.invalid(
          path.child('deprecationWarning'),
          v.deprecationWarning,
          'can only be set for deprecated versions',
        ),
      );
    else if (v.deprecationWarning.length > 256)
      errs.push(field.tooLong(path.child('deprecationWarning'), v.deprecationWarning, 256));
  }
  const schemaPath = path.child('schema', 'openAPIV3Schema');
  const schema = v.schema?.openAPIV3Schema;
  const preserve = crd.spec.preserveUnknownFields === true;
  if (!schema || Object.keys(schema).length === 0) {
    if (!preserve) errs.push(field.required(schemaPath, 'schemas are required'));
  } else {
    errs.push(
      ...validateCRDSchema(schema, schemaPath, {
        requireStructural: !preserve,
        allowDefaults: !preserve,
        statusSubresource: !!v.subresources?.status,
      }),
    );
  }
  const scale = v.subresources?.scale;
  if (scale) {
    const sp = path.child('subresources', 'scale');
    if (!scale.specReplicasPath) errs.push(field.required(sp.child('specReplicasPath'), ''));
    else errs.push(...validatePath(sp.child('specReplicasPath'), scale.specReplicasPath, ['spec'], ''));
    if (!scale.statusReplicasPath) errs.push(field.required(sp.child('statusReplicasPath'), ''));
    else errs.push(...validatePath(sp.child('statusReplicasPath'), scale.statusReplicasPath, ['status'], ''));
    if (scale.labelSelectorPath)
      errs.push(...validatePath(sp.child('labelSelectorPath'), scale.labelSelectorPath, ['spec', 'status'], ''));
  }
  (v.additionalPrinterColumns ?? []).forEach((c, i) => {
    const cp = path.child('additionalPrinterColumns').index(i);
    if (!c.name) errs.push(field.required(cp.child('name'), ''));
    if (!c.type) errs.push(field.required(cp.child('type'), ''));
    else if (!COLUMN_TYPES.includes(c.type)) errs.push(field.notSupported(cp.child('type'), c.type, COLUMN_TYPES));
    if (c.format && !COLUMN_FORMATS.includes(c.format))
      errs.push(field.notSupported(cp.child('format'), c.format, COLUMN_FORMATS));
    if (c.priority !== undefined && c.priority < 0)
      errs.push(field.invalid(cp.child('priority'), c.priority, 'must be non-negative'));
    if (!c.jsonPath) errs.push(field.required(cp.child('jsonPath'), ''));
    else if (!parseFieldPath(c.jsonPath))
      errs.push(field.invalid(cp.child('jsonPath'), c.jsonPath, 'must be a simple json path'));
  });
  return errs;
}

function validateConversion(crd: CustomResourceDefinition, path: FieldPath): FieldError[] {
  const c = crd.spec.conversion;
  if (!c) return [];
  const errs: FieldError[] = [];
  if (c.strategy !== 'None' && c.strategy !== 'Webhook')
    return [field.notSupported(path.child('strategy'), c.strategy, ['None', 'Webhook'])];
  const wp = path.child('webhook');
  if (c.strategy === 'None') {
    if (c.webhook) errs.push(field.forbidden(wp, 'should not be set when strategy is not set to Webhook'));
    return errs;
  }
  if (!c.webhook) return [field.required(wp, 'required when strategy is set to Webhook')];
  const cc = c.webhook.clientConfig;
  if (!cc) errs.push(field.required(wp.child('clientConfig'), 'required when strategy is set to Webhook'));
  else {
    const cp = wp.child('clientConfig');
    if (cc.url && cc.service) errs.push(field.required(cp, 'exactly one of url or service is required'));
    else if (!cc.url && !cc.service) errs.push(field.required(cp, 'exactly one of url or service is required'));
    if (cc.url) {
      let u: URL | undefined;
      try {
        u = new URL(cc.url);
      } catch {
        errs.push(field.invalid(cp.child('url'), cc.url, 'host must be specified'));
      }
      if (u && u.protocol !== 'https:')
        errs.push(field.invalid(cp.child('url'), cc.url, "'https' is the only allowed URL scheme"));
      if (u && (u.search || u.hash))
        errs.push(field.invalid(cp.child('url'), cc.url, 'query parameters and fragments are not allowed'));
    }
    if (cc.service) {
      const sp = cp.child('service');
      if (!cc.service.name) errs.push(field.required(sp.child('name'), 'service name is required'));
      if (!cc.service.namespace) errs.push(field.required(sp.child('namespace'), 'service namespace is required'));
      const port = cc.service.port ?? 443;
      if (port < 1 || port > 65535)
        errs.push(field.invalid(sp.child('port'), port, 'port is not valid: must be between 1 and 65535, inclusive'));
      if (cc.service.path && !cc.service.path.startsWith('/'))
        errs.push(field.invalid(sp.child('path'), cc.service.path, "must start with a '/'"));
    }
  }
  const versions = c.webhook.conversionReviewVersions ?? [];
  const vp = wp.child('conversionReviewVersions');
  if (!versions.length) errs.push(field.required(vp, 'must specify at least one version'));
  else if (!versions.some((v) => CONVERSION_REVIEW_VERSIONS.includes(v)))
    errs.push(field.invalid(vp, versions, `must include at least one of ${CONVERSION_REVIEW_VERSIONS.join(', ')}`));
  if (crd.spec.preserveUnknownFields)
    errs.push(
      field.invalid(
        new FieldPath('spec', 'preserveUnknownFields'),
        true,
        'must be false in order to use defaults in the schema',
      ),
    );
  return errs;
}

/** The errors of a CRD being created (or the new state of an update, before the update-only rules). */
export function validateCustomResourceDefinition(crd: CustomResourceDefinition): FieldError[] {
  const errs: FieldError[] = [];
  const spec = crd.spec;
  const sp = new FieldPath('spec');
  const name = crd.metadata?.name ?? '';
  if (!spec) return [field.required(sp, '')];
  const expected = `${spec.names?.plural ?? ''}.${spec.group ?? ''}`;
  if (name !== expected)
    errs.push(field.invalid(new FieldPath('metadata', 'name'), name, 'must be spec.names.plural+"."+spec.group'));
  if (!spec.group) errs.push(field.required(sp.child('group'), ''));
  else {
    errs.push(...isDNS1123Subdomain(spec.group).map((m) => field.invalid(sp.child('group'), spec.group, m)));
    if (spec.group.split('.').length < 2)
      errs.push(field.invalid(sp.child('group'), spec.group, 'should be a domain with at least one dot'));
  }
  if (spec.scope !== 'Cluster' && spec.scope !== 'Namespaced')
    errs.push(
      spec.scope
        ? field.notSupported(sp.child('scope'), spec.scope, ['Cluster', 'Namespaced'])
        : field.required(sp.child('scope'), ''),
    );
  errs.push(...validateNames(spec.names, sp.child('names')));
  const versions = spec.versions ?? [];
  const vp = sp.child('versions');
  if (!versions.length)
    errs.push(field.invalid(vp, versions, 'must have exactly one version marked as storage version'));
  const seen = new Set<string>();
  let storage = 0;
  versions.forEach((v, i) => {
    if (v.storage) storage++;
    if (seen.has(v.name)) errs.push(field.invalid(vp.index(i).child('name'), v.name, 'must be unique'));
    seen.add(v.name);
    errs.push(...validateVersion(crd, v, vp.index(i)));
  });
  if (versions.length && storage !== 1)
    errs.push(
      field.invalid(
        vp,
        versions.map((v) => v.name),
        'must have exactly one version marked as storage version',
      ),
    );
  if (versions.length && !versions.some((v) => v.served))
    errs.push(
      field.invalid(
        vp,
        versions.map((v) => v.name),
        'must have at least one version marked as served',
      ),
    );
  errs.push(...validateConversion(crd, sp.child('conversion')));
  if (spec.conversion?.strategy === 'None' && versions.length > 1) {
    // Every version with the same schema is not required by 1.21: None converts by apiVersion alone.
  }
  errs.push(...validateStoredVersions(crd));
  return errs;
}

/** status.storedVersions: every one a version of spec.versions, the storage version among them. */
export function validateStoredVersions(crd: CustomResourceDefinition): FieldError[] {
  const stored = crd.status?.storedVersions ?? [];
  const p = new FieldPath('status', 'storedVersions');
  const errs: FieldError[] = [];
  const versions = new Set((crd.spec?.versions ?? []).map((v) => v.name));
  stored.forEach((s, i) => {
    if (!versions.has(s)) errs.push(field.invalid(p.index(i), s, 'must appear in spec.versions'));
  });
  const storage = crd.spec?.versions?.find((v) => v.storage)?.name;
  if (stored.length && storage && !stored.includes(storage))
    errs.push(field.invalid(p, stored, `must have the storage version ${storage}`));
  return errs;
}

/** The update-only rules: group, names.plural and scope are immutable; stored versions stay in spec.versions. */
export function validateCustomResourceDefinitionUpdate(
  crd: CustomResourceDefinition,
  old: CustomResourceDefinition,
): FieldError[] {
  const errs = validateCustomResourceDefinition(crd);
  const sp = new FieldPath('spec');
  if (crd.spec?.group !== old.spec?.group)
    errs.push(field.invalid(sp.child('group'), crd.spec?.group, 'field is immutable'));
  if (crd.spec?.scope !== old.spec?.scope)
    errs.push(field.invalid(sp.child('scope'), crd.spec?.scope, 'field is immutable'));
  if (crd.spec?.names?.plural !== old.spec?.names?.plural)
    errs.push(field.invalid(sp.child('names', 'plural'), crd.spec?.names?.plural, 'field is immutable'));
  return errs;
}
