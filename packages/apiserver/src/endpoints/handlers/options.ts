/**
 * Query parameters of the resource verbs (Document 1's operation tables), parsed and checked once per request.
 * Every bad value is a 400 (or, for dryRun, the 422 Kubernetes answers) that names the parameter.
 */
import { badRequest, FieldPath, field, invalid } from '@platform/api';

import { type ListOptions } from '../../registry/rest/rest';
import { isTrueParam, parseGoBool } from '../parse-bool';

/** The query of a request. */
export type Query = URLSearchParams;

/** `pretty=true` (any of Go's true spellings; as in Kubernetes, another value is false, not an error). */
export function isPretty(q: Query): boolean {
  return isTrueParam(q.get('pretty'));
}

/** `dryRun`: only `All` (repeatable) is supported, as in Kubernetes; anything else is 422 naming the value. */
export function parseDryRun(q: Query, optionsKind: string): boolean {
  return dryRunFromValues(q.getAll('dryRun'), optionsKind);
}

/** The dry-run values of a query or of a DeleteOptions body: true when `All`, 422 for anything else. */
export function dryRunFromValues(all: readonly string[], optionsKind: string): boolean {
  const values = all.filter((v) => v !== '');
  const bad = values.filter((v) => v !== 'All');
  if (bad.length) {
    throw invalid({ group: 'meta.platform', kind: optionsKind }, '', [
      field.notSupported(new FieldPath('dryRun'), bad.length === 1 ? bad[0] : bad, ['All']),
    ]);
  }
  return values.length > 0;
}

/** `fieldManager`: at most 128 printable characters. */
export function parseFieldManager(q: Query, optionsKind: string): string | undefined {
  const v = q.get('fieldManager');
  if (v === null || v === '') return undefined;
  const path = new FieldPath('fieldManager');
  if (v.length > 128) throw invalid({ group: 'meta.platform', kind: optionsKind }, '', [field.tooLong(path, v, 128)]);
  if (!/^[\x20-\x7e]*$/.test(v)) {
    throw invalid({ group: 'meta.platform', kind: optionsKind }, '', [
      field.invalid(path, v, 'must be made of printable characters'),
    ]);
  }
  return v;
}

function parseNonNegativeInt(q: Query, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  if (!/^-?\d+$/.test(v)) throw badRequest(`invalid value for ${name}: ${JSON.stringify(v)}: must be an integer`);
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw badRequest(`invalid value for ${name}: ${JSON.stringify(v)}: out of range`);
  return n;
}

/**
 * A boolean parameter read as Go's `strconv.ParseBool` (`1 t T TRUE true True`, `0 f F FALSE false False`); absent or
 * empty is undefined, anything else a 400 naming the parameter.
 */
export function parseBool(q: Query, name: string): boolean | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  const b = parseGoBool(v);
  if (b === undefined) {
    throw badRequest(
      `invalid value for ${name}: ${JSON.stringify(v)}: strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`,
    );
  }
  return b;
}

/** `gracePeriodSeconds` of a delete (negative values are accepted and mean "immediately", as in Kubernetes). */
export function parseGracePeriod(q: Query): number | undefined {
  return parseNonNegativeInt(q, 'gracePeriodSeconds');
}

/** `propagationPolicy` of a delete. */
export function parsePropagationPolicy(q: Query): 'Orphan' | 'Background' | 'Foreground' | undefined {
  const v = q.get('propagationPolicy');
  if (v === null || v === '') return undefined;
  if (v === 'Orphan' || v === 'Background' || v === 'Foreground') return v;
  throw invalid({ group: 'meta.platform', kind: 'DeleteOptions' }, '', [
    field.notSupported(new FieldPath('propagationPolicy'), v, ['Foreground', 'Background', 'Orphan', 'nil']),
  ]);
}

/**
 * The options of a list or watch, with Document 1's resource version rules: the Invalid cells of its list table are
 * rejected with 400 and a message saying which combination is not allowed.
 */
export function parseListOptions(q: Query, isWatch: boolean): ListOptions {
  const o: ListOptions = {};
  const rv = q.get('resourceVersion');
  const match = q.get('resourceVersionMatch');
  const cont = q.get('continue');
  const limit = parseNonNegativeInt(q, 'limit');
  const timeoutSeconds = parseNonNegativeInt(q, 'timeoutSeconds');
  if (rv !== null && rv !== '' && !/^\d+$/.test(rv)) {
    throw badRequest(`invalid resource version ${JSON.stringify(rv)}: must be a non-negative integer`);
  }
  if (match !== null && match !== '') {
    if (match !== 'Exact' && match !== 'NotOlderThan') {
      throw badRequest(
        `resourceVersionMatch: Unsupported value: ${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan", ""`,
      );
    }
    if (isWatch) throw badRequest('resourceVersionMatch is forbidden for watch');
    if (rv === null || rv === '')
      throw badRequest('resourceVersionMatch is forbidden unless resourceVersion is provided');
    if (cont) throw badRequest('resourceVersionMatch is forbidden when continue is provided');
    if (match === 'Exact' && rv === '0')
      throw badRequest('resourceVersionMatch "Exact" is forbidden for resourceVersion "0"');
    o.resourceVersionMatch = match;
  }
  if (cont) {
    if (rv && rv !== '0') throw badRequest('specifying resource version is not allowed when using continue');
    o.continue = cont;
  } else if (rv !== null && rv !== '') {
    o.resourceVersion = rv;
  }
  if (limit !== undefined && limit > 0) o.limit = limit;
  if (timeoutSeconds !== undefined) o.timeoutSeconds = timeoutSeconds;
  const ls = q.get('labelSelector');
  if (ls) o.labelSelector = ls;
  const fs = q.get('fieldSelector');
  if (fs) o.fieldSelector = fs;
  // `watch` chose the verb already (request info); a value that is not a boolean is refused here.
  parseBool(q, 'watch');
  const bookmarks = parseBool(q, 'allowWatchBookmarks');
  if (bookmarks) o.allowWatchBookmarks = true;
  return o;
}
