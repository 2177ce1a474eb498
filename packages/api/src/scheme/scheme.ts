/**
 * The scheme: which kinds exist, under which group, version and resource name. Lookups go both ways (kind to
 * resource, resource to kind, short names), and discovery is served from it.
 */
import { type TObject } from '@sinclair/typebox';

import {
  APIGroupListSchema,
  APIGroupSchema,
  APIResourceListSchema,
  APIVersionsSchema,
  DeleteOptionsSchema,
  PartialObjectMetadataSchema,
  StatusSchema,
  TableSchema,
  WatchEventSchema,
} from '../meta/v1/types';
import { type Kind } from './kind';

/** A group and version. */
export interface GroupVersion {
  group: string;
  version: string;
}

/** Splits an `apiVersion` (`v1`, `apps/v1`) into group and version. */
export function parseApiVersion(apiVersion: string): GroupVersion {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** Joins a group and version into an `apiVersion`. */
export function formatApiVersion(gv: GroupVersion): string {
  return gv.group === '' ? gv.version : `${gv.group}/${gv.version}`;
}

/**
 * Kubernetes' version priority: GA before beta before alpha, higher numbers first within each
 * (`v2` > `v1` > `v1beta2` > `v1beta1` > `v1alpha1`); versions of another shape sort last, by name.
 */
export function compareVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] | undefined => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return undefined;
    const stage = m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1;
    return [stage, Number(m[1]), Number(m[3] ?? 0)];
  };
  const ra = rank(a);
  const rb = rank(b);
  if (ra && rb) {
    for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return (rb[i] as number) - (ra[i] as number);
    return 0;
  }
  if (ra) return -1;
  if (rb) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The kinds served in every group version (as Kubernetes registers them with `AddToGroupVersion`), by kind name.
 * They are decoded and encoded in any `apiVersion`.
 */
const META_KINDS: Record<string, TObject> = {
  Status: StatusSchema,
  DeleteOptions: DeleteOptionsSchema,
  WatchEvent: WatchEventSchema,
  Table: TableSchema,
  PartialObjectMetadata: PartialObjectMetadataSchema,
  APIVersions: APIVersionsSchema,
  APIGroup: APIGroupSchema,
  APIGroupList: APIGroupListSchema,
  APIResourceList: APIResourceListSchema,
};

/** The schema of a meta kind (`Status`, `DeleteOptions`, `WatchEvent`, ...), whatever its apiVersion. */
export function metaKindSchema(kind: string): TObject | undefined {
  return Object.prototype.hasOwnProperty.call(META_KINDS, kind) ? META_KINDS[kind] : undefined;
}

/** A registry of kinds. */
export class Scheme {
  private readonly byKind = new Map<string, Kind>();
  private readonly byResource = new Map<string, Kind>();
  private readonly all: Kind[] = [];

  /** Registers kinds. Throws when a group/version/kind or group/version/resource is registered twice. */
  add(...kinds: Kind[]): this {
    for (const k of kinds) {
      const gvk = `${k.apiVersion}/${k.kind}`;
      const gvr = `${k.apiVersion}/${k.plural}`;
      if (this.byKind.has(gvk)) throw new Error(`kind ${gvk} is registered twice`);
      if (this.byResource.has(gvr)) throw new Error(`resource ${gvr} is registered twice`);
      this.byKind.set(gvk, k);
      this.byResource.set(gvr, k);
      this.all.push(k);
    }
    return this;
  }

  /** The kind of an `apiVersion` and kind name (list kinds not included: see {@link schemaFor}). */
  kindFor(apiVersion: string, kind: string): Kind | undefined {
    return this.byKind.get(`${apiVersion}/${kind}`);
  }

  /** The kind served at a group, version and resource (plural) name. */
  kindForResource(gv: GroupVersion, resource: string): Kind | undefined {
    return this.byResource.get(`${formatApiVersion(gv)}/${resource}`);
  }

  /**
   * The schema of any kind this scheme can decode or encode in `apiVersion`: a registered kind, its list kind,
   * or a meta kind.
   */
  schemaFor(apiVersion: string, kind: string): TObject | undefined {
    const k = this.byKind.get(`${apiVersion}/${kind}`);
    if (k) return k.schema;
    if (kind.endsWith('List')) {
      const item = this.byKind.get(`${apiVersion}/${kind.slice(0, -4)}`);
      if (item) return item.listSchema;
    }
    return metaKindSchema(kind);
  }

  /** Every registered kind, in registration order. */
  kinds(): readonly Kind[] {
    return this.all;
  }

  /** The kinds of one group version, in registration order. */
  kindsOf(gv: GroupVersion): Kind[] {
    return this.all.filter((k) => k.group === gv.group && k.version === gv.version);
  }

  /** The groups, each with its versions in priority order (the first is the preferred version). */
  groups(): { name: string; versions: string[] }[] {
    const groups = new Map<string, Set<string>>();
    for (const k of this.all) {
      let versions = groups.get(k.group);
      if (!versions) groups.set(k.group, (versions = new Set()));
      versions.add(k.version);
    }
    return [...groups].map(([name, versions]) => ({ name, versions: [...versions].sort(compareVersions) }));
  }
}
