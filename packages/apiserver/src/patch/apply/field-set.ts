/**
 * Sets of field paths, the unit of ownership in server-side apply (model: structured-merge-diff `fieldpath`).
 *
 * A path is a list of elements, each written as in the `FieldsV1` format of `metadata.managedFields`:
 *
 * - `f:<name>`: a field of a struct, or a key of a map;
 * - `k:{"name":"nginx"}`: the element of an associative list (`listType: map`) with those key field values;
 * - `v:<json>`: the element of a set list (`listType: set`) with that value;
 * - `i:<n>`: the element at an index (lists that are neither; only read from clients, never produced).
 *
 * A set holds "members": the paths that are owned. A path may also appear only as the prefix of members (a struct
 * that holds an owned field without being owned itself); in `FieldsV1` a member that also has owned children is
 * marked with the `.` key.
 */

/** One element of a path, in its `FieldsV1` spelling. */
export type PathElement = string;

/** A path from the root of an object. */
export type Path = readonly PathElement[];

const MEMBER = '.';
const ELEMENT_PREFIXES = ['f:', 'k:', 'v:', 'i:'];

/** A malformed `FieldsV1` value. */
export class FieldsV1Error extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FieldsV1Error';
  }
}

/** A field element: `f:<name>`. */
export function fieldElement(name: string): PathElement {
  return `f:${name}`;
}

/** A key element of an associative list; the key fields are written sorted by name, as Kubernetes does. */
export function keyElement(fields: Record<string, unknown>): PathElement {
  const sorted = Object.keys(fields)
    .sort()
    .map((k) => [k, fields[k]] as const);
  return `k:${JSON.stringify(Object.fromEntries(sorted))}`;
}

/** A value element of a set list. */
export function valueElement(value: unknown): PathElement {
  return `v:${JSON.stringify(value)}`;
}

/** An index element. */
export function indexElement(i: number): PathElement {
  return `i:${i}`;
}

function scalarText(v: unknown): string {
  return JSON.stringify(v) ?? 'null';
}

/**
 * A path as Kubernetes prints it in conflict messages: `.spec.containers[name="nginx"].image`,
 * `.metadata.finalizers[="a"]`, `.spec.ports[port=80,protocol="TCP"]`.
 */
export function pathString(path: Path): string {
  return path
    .map((e) => {
      const body = e.slice(2);
      if (e.startsWith('f:')) return `.${body}`;
      if (e.startsWith('i:')) return `[${body}]`;
      if (e.startsWith('v:')) return `[=${body}]`;
      try {
        const fields = JSON.parse(body) as Record<string, unknown>;
        return `[${Object.entries(fields)
          .map(([k, v]) => `${k}=${scalarText(v)}`)
          .join(',')}]`;
      } catch {
        return `[${body}]`;
      }
    })
    .join('');
}

/** Orders paths element by element, a parent before its children. */
export function comparePaths(a: Path, b: Path): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] as string;
    const y = b[i] as string;
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

// Members are kept as their elements joined by NUL, which no element contains: names of fields and map keys are
// validated (no control characters), and key and value elements are JSON, which escapes them.
const SEP = '\u0000';

function encode(path: Path): string {
  return path.join(SEP);
}

function decode(member: string): PathElement[] {
  return member.split(SEP);
}

/** An immutable set of paths. Operations return new sets. */
export class FieldSet {
  private readonly members: ReadonlySet<string>;
  /** Every proper prefix of a member (computed on first use; the set never changes). */
  private prefixes?: Set<string>;

  private constructor(members: ReadonlySet<string>) {
    this.members = members;
  }

  /** The empty set. */
  static empty(): FieldSet {
    return new FieldSet(new Set());
  }

  /** A set of the given paths. */
  static of(paths: Iterable<Path>): FieldSet {
    const s = new Set<string>();
    for (const p of paths) s.add(encode(p));
    return new FieldSet(s);
  }

  /**
   * Reads a `FieldsV1` value (the JSON object of a managed-fields entry). Throws a {@link FieldsV1Error} when it is
   * not one: a non-object node, a key that is neither `.` nor a known element kind, or a `.` with content.
   */
  static fromFieldsV1(value: unknown): FieldSet {
    const out = new Set<string>();
    const walk = (node: unknown, path: PathElement[]): void => {
      if (node === null || typeof node !== 'object' || Array.isArray(node)) {
        throw new FieldsV1Error(`expected an object at ${pathString(path) || 'the root'}`);
      }
      const keys = Object.keys(node);
      if (keys.length === 0 && path.length > 0) {
        out.add(encode(path));
        return;
      }
      for (const k of keys) {
        const child = (node as Record<string, unknown>)[k];
        if (k === MEMBER) {
          if (path.length === 0) throw new FieldsV1Error('the root cannot be a member');
          if (child === null || typeof child !== 'object' || Object.keys(child).length > 0) {
            throw new FieldsV1Error(`"." must be an empty object at ${pathString(path)}`);
          }
          out.add(encode(path));
          continue;
        }
        if (!ELEMENT_PREFIXES.some((p) => k.startsWith(p))) {
          throw new FieldsV1Error(`unexpected key ${JSON.stringify(k)} at ${pathString(path) || 'the root'}`);
        }
        if (k.startsWith('k:') || k.startsWith('v:')) {
          try {
            const parsed: unknown = JSON.parse(k.slice(2));
            if (k.startsWith('k:') && (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))) {
              throw new Error('not an object');
            }
          } catch {
            throw new FieldsV1Error(`invalid path element ${JSON.stringify(k)}`);
          }
        }
        if (k.startsWith('i:') && !/^\d+$/.test(k.slice(2))) {
          throw new FieldsV1Error(`invalid path element ${JSON.stringify(k)}`);
        }
        walk(child, [...path, k]);
      }
    };
    walk(value, []);
    return new FieldSet(out);
  }

  /** The `FieldsV1` JSON object of this set (children sorted, `.` first). */
  toFieldsV1(): Record<string, unknown> {
    interface Node {
      member: boolean;
      children: Map<string, Node>;
    }
    const root: Node = { member: false, children: new Map() };
    for (const member of this.members) {
      let n = root;
      for (const e of decode(member)) {
        let c = n.children.get(e);
        if (!c) {
          c = { member: false, children: new Map() };
          n.children.set(e, c);
        }
        n = c;
      }
      n.member = true;
    }
    const write = (n: Node): Record<string, unknown> => {
      const o: Record<string, unknown> = {};
      if (n.member && n.children.size > 0) o[MEMBER] = {};
      for (const k of [...n.children.keys()].sort()) o[k] = write(n.children.get(k) as Node);
      return o;
    };
    return write(root);
  }

  get size(): number {
    return this.members.size;
  }

  isEmpty(): boolean {
    return this.members.size === 0;
  }

  has(path: Path): boolean {
    return this.members.has(encode(path));
  }

  /** True when some member lies strictly below `path`. */
  hasDescendant(path: Path): boolean {
    if (path.length === 0) return this.members.size > 0;
    if (!this.prefixes) {
      this.prefixes = new Set();
      for (const m of this.members) {
        for (let i = m.indexOf(SEP); i >= 0; i = m.indexOf(SEP, i + 1)) this.prefixes.add(m.slice(0, i));
      }
    }
    return this.prefixes.has(encode(path));
  }

  /** This set with `paths` added. */
  with(...paths: Path[]): FieldSet {
    const s = new Set(this.members);
    for (const p of paths) s.add(encode(p));
    return new FieldSet(s);
  }

  union(o: FieldSet): FieldSet {
    const s = new Set(this.members);
    for (const m of o.members) s.add(m);
    return new FieldSet(s);
  }

  /** The members of this set that are not members of `o` (exact paths, not subtrees). */
  difference(o: FieldSet): FieldSet {
    return new FieldSet(new Set([...this.members].filter((m) => !o.members.has(m))));
  }

  intersection(o: FieldSet): FieldSet {
    return new FieldSet(new Set([...this.members].filter((m) => o.members.has(m))));
  }

  /** This set without the members that are `path` or lie below it. */
  withoutSubtree(path: Path): FieldSet {
    const exact = encode(path);
    const prefix = `${exact}${SEP}`;
    return new FieldSet(new Set([...this.members].filter((m) => m !== exact && !m.startsWith(prefix))));
  }

  equals(o: FieldSet): boolean {
    return this.size === o.size && [...this.members].every((m) => o.members.has(m));
  }

  /** The members, in no particular order. */
  *[Symbol.iterator](): IterableIterator<Path> {
    for (const m of this.members) yield decode(m);
  }

  /** The members in path order (parents before children, siblings sorted), as messages list them. */
  sorted(): Path[] {
    return [...this].sort(comparePaths);
  }
}
