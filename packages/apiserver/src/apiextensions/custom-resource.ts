/**
 * Serving one version of a CustomResourceDefinition (model: 1.21's `pkg/apiserver/customresource_handler.go` and
 * `pkg/registry/customresource/`): a kind built from the CRD's accepted names, a generic store over the same store
 * as built-in kinds (keys `/registry/<group>/<plural>/...`, JSON values), the CRD's schema pruning, defaulting and
 * validating every write, the `status` and `scale` subresources, printer columns, and deprecation warnings.
 */
import {
  AGE_COLUMN,
  age,
  type AnnotatedSchema,
  type ApiObject,
  badRequest,
  type CustomResourceDefinition,
  type CustomResourceDefinitionVersion,
  CustomObjectListSchema,
  CustomObjectSchema,
  type FieldError,
  FieldPath,
  field,
  invalid,
  type Kind,
  type Scale,
  STANDARD_VERBS,
  StatusError,
  type SubresourceSpec,
  type TableColumn,
} from '@platform/api';

import { addWarning } from '../filters/warning';
import { defaultStrategy, statusStrategy } from '../registry/generic/default-strategy';
import { type ObjectStorage } from '../registry/generic/storage-interface';
import { GenericStore, type StoreDefinition } from '../registry/generic/store';
import {
  type Getter,
  type RequestContext,
  type RestStorage,
  type UpdatedObjectInfo,
  type Updater,
  type ValidateObjectFunc,
  type WriteOptions,
} from '../registry/rest/rest';
import { selectionPredicate } from '../registry/generic/predicate';
import { applySchemaOf } from './apply-schema';
import { evaluate, getPath, parseFieldPath, parseJsonPath, setPath } from './jsonpath';
import { type CompiledSchema, compileSchema } from './schema';

type Obj = ApiObject & Record<string, unknown>;

/** The OpenAPI definition name of a CRD version's kind (`com.example.v1.Widget`), as 1.21 names it. */
export function definitionName(group: string, version: string, kind: string): string {
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

/** The printer columns of a version: its additionalPrinterColumns after Name, or Age alone. */
export function printerColumns(v: CustomResourceDefinitionVersion): TableColumn<ApiObject>[] {
  const defs = v.additionalPrinterColumns ?? [];
  if (!defs.length) return [AGE_COLUMN as TableColumn<ApiObject>];
  return defs.map((c) => {
    const steps = parseJsonPath(c.jsonPath);
    const type = (['integer', 'number', 'boolean', 'date', 'string'].includes(c.type) ? c.type : 'string') as
      'string' | 'integer';
    return {
      name: c.name,
      type,
      ...(c.format ? { format: c.format } : {}),
      ...(c.description ? { description: c.description } : {}),
      ...(c.priority ? { priority: c.priority } : {}),
      cell: (o: ApiObject, now: number): unknown => {
        const values = steps ? evaluate(o, steps) : [];
        if (!values.length) return null;
        const value = values.length === 1 ? values[0] : values;
        if (c.type === 'date' && typeof value === 'string') return age(value, now);
        if (value !== null && typeof value === 'object') return JSON.stringify(value);
        return value;
      },
    };
  });
}

/** Everything needed to serve one CRD version. */
export interface CustomResourceVersion {
  kind: Kind;
  main: GenericStore;
  status?: RestStorage;
  scale?: RestStorage;
  schema: CompiledSchema;
  /** The version's schema as server-side apply reads objects (undefined without a schema: read untyped). */
  applySchema?: AnnotatedSchema;
}

/** What a version's storage is built from. */
export interface CustomResourceContext {
  crd: CustomResourceDefinition;
  version: CustomResourceDefinitionVersion;
  storePrefix: string;
  /** The typed JSON storage under the versions' shared keys, converting to and from `version`. */
  storage: ObjectStorage;
  /** The version's compiled schema, when the caller has it already (compiled from `version` otherwise). */
  schema?: CompiledSchema;
  deleteCollectionWorkers: number;
  scaleKind: Kind | undefined;
  /** True while the CRD is being deleted: no new objects. */
  terminating(): boolean;
}

/** The kind of a CRD version, from its accepted names. */
export function customKind(
  crd: CustomResourceDefinition,
  v: CustomResourceDefinitionVersion,
  schema: CompiledSchema,
): Kind {
  const names = crd.status?.acceptedNames ?? crd.spec.names;
  const group = crd.spec.group;
  const subresources: Record<string, SubresourceSpec> = {};
  if (v.subresources?.status) subresources.status = { verbs: ['get', 'patch', 'update'] };
  if (v.subresources?.scale)
    subresources.scale = {
      kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
      verbs: ['get', 'patch', 'update'],
    };
  const namespaced = crd.spec.scope === 'Namespaced';
  const spec = {
    group,
    version: v.name,
    kind: names.kind,
    plural: names.plural,
    singular: names.singular || names.kind.toLowerCase(),
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
    scope: namespaced ? ('Namespaced' as const) : ('Cluster' as const),
    subresources,
    schema: CustomObjectSchema,
    columns: printerColumns(v),
    // Decoding prunes unknown fields, then applies the schema's defaults (as 1.21's decoder does).
    defaults: (o: ApiObject) => {
      schema.prune(o as Obj);
      schema.applyDefaults(o as Obj);
    },
  };
  const fields: Kind['fields'] = { 'metadata.name': (o) => (o as ApiObject).metadata?.name ?? '' };
  if (namespaced)
    (fields as Record<string, unknown>)['metadata.namespace'] = (o: ApiObject) => o.metadata?.namespace ?? '';
  return {
    spec: spec as unknown as Kind['spec'],
    group,
    version: v.name,
    kind: names.kind,
    plural: names.plural,
    scope: spec.scope,
    singular: spec.singular,
    shortNames: spec.shortNames,
    categories: spec.categories,
    verbs: STANDARD_VERBS,
    subresources,
    apiVersion: `${group}/${v.name}`,
    listKind: names.listKind || `${names.kind}List`,
    schema: CustomObjectSchema,
    listSchema: CustomObjectListSchema,
    namespaced,
    fields,
  };
}

function specOf(obj: Obj, withStatus: boolean): string {
  const { metadata: _m, status, apiVersion: _a, kind: _k, ...rest } = obj;
  return JSON.stringify(withStatus ? { ...rest, status } : rest);
}

/** The schema's errors of an object, as 422 field errors (scale paths checked too). */
function validateObject(schema: CompiledSchema, v: CustomResourceDefinitionVersion, obj: ApiObject): FieldError[] {
  const errs = schema.validate(obj as Obj);
  const scale = v.subresources?.scale;
  if (scale) {
    const check = (path: string | null | undefined): void => {
      const names = path ? parseFieldPath(path) : undefined;
      if (!names) return;
      const value = getPath(obj, names);
      if (value === undefined) return;
      if (typeof value !== 'number' || !Number.isInteger(value))
        errs.push(field.invalid(new FieldPath(...names), value, 'must be an integer'));
      else if (value < 0) errs.push(field.invalid(new FieldPath(...names), value, 'should be a non-negative integer'));
    };
    check(scale.specReplicasPath);
    check(scale.statusReplicasPath);
    const sel = scale.labelSelectorPath ? parseFieldPath(scale.labelSelectorPath) : undefined;
    const selValue = sel ? getPath(obj, sel) : undefined;
    if (sel && selValue !== undefined && typeof selValue !== 'string')
      errs.push(field.invalid(new FieldPath(...sel), selValue, 'must be a string'));
  }
  return errs;
}

/** A store that refuses new objects while its CRD is being deleted (as 1.21's handler does). */
class CustomResourceStore extends GenericStore {
  constructor(
    def: StoreDefinition,
    private readonly terminating: () => boolean,
  ) {
    super(def);
  }

  override async create(...args: Parameters<GenericStore['create']>): ReturnType<GenericStore['create']> {
    if (this.terminating()) throw createWhileTerminating();
    return super.create(...args);
  }

  override async update(...args: Parameters<GenericStore['update']>): ReturnType<GenericStore['update']> {
    if (!this.terminating()) return super.update(...args);
    // An update may not create while terminating.
    const [ctx, info, validateCreate, validateUpdate, o] = args;
    return super.update(
      ctx,
      {
        name: info.name,
        updatedObject: async (c, current) => {
          if (!current) throw createWhileTerminating();
          return info.updatedObject(c, current);
        },
      },
      validateCreate,
      validateUpdate,
      o,
    );
  }
}

function createWhileTerminating(): StatusError {
  return new StatusError({
    code: 405,
    reason: 'MethodNotAllowed',
    message: 'create not allowed while custom resource definition is terminating',
    details: {},
  });
}

/** The `status` subresource: reads the object, writes only its status. */
class CustomStatusREST implements Getter, Updater {
  constructor(
    readonly kind: Kind,
    private readonly main: GenericStore,
    private readonly status: GenericStore,
  ) {}

  get(ctx: RequestContext, name: string, o: { resourceVersion?: string }): Promise<ApiObject> {
    return this.main.get(ctx, name, o);
  }

  update(
    ctx: RequestContext,
    info: UpdatedObjectInfo,
    validateCreate: ValidateObjectFunc | undefined,
    validateUpdate: ValidateObjectFunc | undefined,
    o: WriteOptions,
  ): Promise<{ object: ApiObject; created: boolean }> {
    return this.status.update(ctx, info, validateCreate, validateUpdate, o);
  }
}

/** The `scale` subresource of a CRD version: an autoscaling/v1 Scale read from and written to the CRD's paths. */
class CustomScaleREST implements Getter, Updater {
  private readonly specPath: string[];
  private readonly statusPath: string[];
  private readonly selectorPath: string[] | undefined;

  constructor(
    readonly kind: Kind,
    private readonly parentKind: Kind,
    private readonly main: GenericStore,
    paths: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string | null },
  ) {
    this.specPath = parseFieldPath(paths.specReplicasPath) ?? ['spec', 'replicas'];
    this.statusPath = parseFieldPath(paths.statusReplicasPath) ?? ['status', 'replicas'];
    this.selectorPath = paths.labelSelectorPath ? parseFieldPath(paths.labelSelectorPath) : undefined;
  }

  private scaleOf(obj: ApiObject): Scale {
    const m = obj.metadata ?? {};
    const replicas = getPath(obj, this.specPath);
    if (typeof replicas !== 'number')
      throw new StatusError({
        code: 500,
        reason: 'InternalError',
        message: `Internal error occurred: the spec replicas field ${JSON.stringify(`.${this.specPath.join('.')}`)} does not exist`,
        details: {},
      });
    const statusReplicas = getPath(obj, this.statusPath);
    const selector = this.selectorPath ? getPath(obj, this.selectorPath) : undefined;
    return {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: {
        name: m.name,
        ...(m.namespace ? { namespace: m.namespace } : {}),
        uid: m.uid,
        resourceVersion: m.resourceVersion,
        creationTimestamp: m.creationTimestamp,
      },
      spec: { replicas },
      status: {
        replicas: typeof statusReplicas === 'number' ? statusReplicas : 0,
        ...(typeof selector === 'string' ? { selector } : {}),
      },
    };
  }

  async get(ctx: RequestContext, name: string, o: { resourceVersion?: string }): Promise<ApiObject> {
    return this.scaleOf(await this.main.get(ctx, name, o));
  }

  async update(
    ctx: RequestContext,
    info: UpdatedObjectInfo,
    _validateCreate: ValidateObjectFunc | undefined,
    validateUpdate: ValidateObjectFunc | undefined,
    o: WriteOptions,
  ): Promise<{ object: ApiObject; created: boolean }> {
    const r = await this.main.update(
      ctx,
      {
        name: info.name,
        updatedObject: async (c, current) => {
          if (!current) throw badRequest(`${this.parentKind.kind} ${JSON.stringify(info.name)} not found`);
          const old = this.scaleOf(current);
          const next = (await info.updatedObject(c, structuredClone(old))) as Scale;
          const replicas = next.spec?.replicas ?? 0;
          if (replicas < 0)
            throw invalid({ group: 'autoscaling', kind: 'Scale' }, info.name, [
              field.invalid(new FieldPath('spec', 'replicas'), replicas, 'must be greater than or equal to 0'),
            ]);
          if (validateUpdate) await validateUpdate(next, old);
          const obj = structuredClone(current) as Obj;
          setPath(obj, this.specPath, replicas);
          const rv = next.metadata?.resourceVersion;
          if (rv) (obj.metadata ??= {}).resourceVersion = rv;
          return obj;
        },
      },
      undefined,
      undefined,
      o,
    );
    return { object: this.scaleOf(r.object), created: false };
  }
}

/** Adds a deprecation warning to every request a storage serves (the first argument of each call is its context). */
function withWarning<T extends object>(storage: T, text: string | undefined): T {
  if (!text) return storage;
  return new Proxy(storage, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function' || prop === 'constructor') return v;
      return (...args: unknown[]) => {
        const ctx = args[0] as RequestContext | undefined;
        if (ctx && typeof ctx === 'object' && 'now' in ctx) addWarning(ctx, '', text);
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** 1.21's default deprecation warning: names the newest served version of equal or greater stability, if any. */
export function deprecationWarning(
  crd: CustomResourceDefinition,
  v: CustomResourceDefinitionVersion,
): string | undefined {
  if (!v.deprecated) return undefined;
  if (v.deprecationWarning) return v.deprecationWarning;
  const names = crd.status?.acceptedNames ?? crd.spec.names;
  const text = `${crd.spec.group}/${v.name} ${names.kind} is deprecated`;
  const stability = (name: string): number => (/alpha/.test(name) ? 0 : /beta/.test(name) ? 1 : 2);
  const better = (crd.spec.versions ?? [])
    .filter((o) => o.served && !o.deprecated && o.name !== v.name && stability(o.name) >= stability(v.name))
    .map((o) => o.name)
    .sort((a, b) => stability(b) - stability(a) || b.localeCompare(a, undefined, { numeric: true }));
  return better[0] ? `${text}; use ${crd.spec.group}/${better[0]} ${names.kind}` : text;
}

/** Builds the storages serving one CRD version. */
export function buildCustomResourceVersion(c: CustomResourceContext): CustomResourceVersion {
  const { crd, version: v } = c;
  const schema = c.schema ?? compileSchema(v.schema?.openAPIV3Schema, crd.spec.preserveUnknownFields === true);
  const kind = customKind(crd, v, schema);
  const hasStatus = !!v.subresources?.status;
  const base = defaultStrategy(kind, {
    validate: (_ctx, obj) => validateObject(schema, v, obj),
    validateUpdate: (_ctx, obj) => validateObject(schema, v, obj),
  });
  // Every custom object tracks generation (1.21's customresource strategy), status subresource or not.
  const strategy = {
    ...base,
    prepareForCreate(ctx: RequestContext, obj: ApiObject) {
      base.prepareForCreate(ctx, obj);
      (obj.metadata ??= {}).generation = 1;
    },
    prepareForUpdate(ctx: RequestContext, obj: ApiObject, old: ApiObject) {
      base.prepareForUpdate(ctx, obj, old);
      const generation = old.metadata?.generation ?? 1;
      (obj.metadata ??= {}).generation =
        specOf(obj as Obj, !hasStatus) === specOf(old as Obj, !hasStatus) ? generation : generation + 1;
    },
  };
  const keyPrefix = `${c.storePrefix}/${crd.spec.group}/${kind.plural}`;
  const definition: StoreDefinition = {
    kind,
    keyPrefix,
    storage: c.storage,
    predicate: (o) => selectionPredicate(kind, o),
    deleteCollectionWorkers: c.deleteCollectionWorkers,
    returnDeletedObject: true,
    createStrategy: strategy,
    updateStrategy: strategy,
  };
  const main = new CustomResourceStore(definition, c.terminating);
  const warning = deprecationWarning(crd, v);
  const applySchema = applySchemaOf(v.schema?.openAPIV3Schema, crd.spec.preserveUnknownFields === true);
  const out: CustomResourceVersion = {
    kind,
    main: withWarning(main, warning),
    schema,
    ...(applySchema ? { applySchema } : {}),
  };
  if (hasStatus) {
    const status = new GenericStore({
      ...definition,
      // Only the status is validated on the status subresource (1.21's status strategy).
      updateStrategy: statusStrategy({ validateUpdate: (_ctx, obj) => schema.validateStatus(obj as Obj) }),
    });
    out.status = withWarning(new CustomStatusREST(kind, main, status), warning);
  }
  const scale = v.subresources?.scale;
  if (scale && c.scaleKind) out.scale = withWarning(new CustomScaleREST(c.scaleKind, kind, main, scale), warning);
  return out;
}
