/**
 * The JSON paths of CRDs: simple field paths (`.spec.replicas`, the scale subresource's paths) and the JSONPath
 * subset of printer columns (`.status.conditions[0].type`, `.spec.items[*].name`,
 * `.status.conditions[?(@.type=="Ready")].status`), evaluated as kubectl's JSONPath would.
 */

/** One step of a path: a field, an index (`*` for all), or a filter on a field's value. */
export type Step = { field: string } | { index: number | '*' } | { filter: { path: string[]; value: string } };

/** The field names of a simple path (`.spec.replicas` → `['spec', 'replicas']`), or undefined if it is not one. */
export function parseFieldPath(path: string): string[] | undefined {
  const steps = parseJsonPath(path);
  if (!steps || steps.length === 0) return undefined;
  const names: string[] = [];
  for (const s of steps) {
    if (!('field' in s)) return undefined;
    names.push(s.field);
  }
  return names;
}

const FIELD = /^\.([A-Za-z0-9_$-]+)/;
const QUOTED = /^\[['"]([^'"]+)['"]\]/;
const INDEX = /^\[(\d+|\*)\]/;
const FILTER = /^\[\?\(@((?:\.[A-Za-z0-9_-]+)+)\s*==\s*["']([^"']*)["']\)\]/;

/** Parses a printer column's JSONPath (optionally wrapped in `{}`), or undefined when it is not understood. */
export function parseJsonPath(path: string): Step[] | undefined {
  let rest = path.trim();
  if (rest.startsWith('{') && rest.endsWith('}')) rest = rest.slice(1, -1).trim();
  if (!rest.startsWith('.') && !rest.startsWith('[')) return undefined;
  const steps: Step[] = [];
  while (rest.length) {
    let m: RegExpExecArray | null;
    if ((m = FIELD.exec(rest))) steps.push({ field: m[1]! });
    else if ((m = QUOTED.exec(rest))) steps.push({ field: m[1]! });
    else if ((m = INDEX.exec(rest))) steps.push({ index: m[1] === '*' ? '*' : Number(m[1]) });
    else if ((m = FILTER.exec(rest))) steps.push({ filter: { path: m[1]!.slice(1).split('.'), value: m[2]! } });
    else return undefined;
    rest = rest.slice(m[0].length);
  }
  return steps;
}

function stepValues(values: unknown[], step: Step): unknown[] {
  const out: unknown[] = [];
  for (const v of values) {
    if ('field' in step) {
      if (v !== null && typeof v === 'object' && !Array.isArray(v) && step.field in v)
        out.push((v as Record<string, unknown>)[step.field]);
    } else if (!Array.isArray(v)) {
      continue;
    } else if ('index' in step) {
      if (step.index === '*') out.push(...(v as unknown[]));
      else if (step.index < v.length) out.push(v[step.index]);
    } else {
      for (const item of v as unknown[]) {
        const got = evaluate(
          item,
          step.filter.path.map((field) => ({ field })),
        );
        if (got.length && String(got[0]) === step.filter.value) out.push(item);
      }
    }
  }
  return out;
}

/** Every value the path reaches in `obj` (none when a step finds nothing). */
export function evaluate(obj: unknown, steps: Step[]): unknown[] {
  let values: unknown[] = [obj];
  for (const s of steps) values = stepValues(values, s);
  return values;
}

/** The value at a simple path, or undefined. */
export function getPath(obj: unknown, names: string[]): unknown {
  let v: unknown = obj;
  for (const n of names) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
    v = (v as Record<string, unknown>)[n];
  }
  return v;
}

/** Sets the value at a simple path, creating objects on the way. */
export function setPath(obj: Record<string, unknown>, names: string[], value: unknown): void {
  let o = obj;
  for (const n of names.slice(0, -1)) {
    const next = o[n];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) o[n] = {};
    o = o[n] as Record<string, unknown>;
  }
  o[names[names.length - 1]!] = value;
}
