/**
 * The selection predicate of a list or watch: its label and field selectors, parsed once per request and matched
 * against each object (model: apiserver `pkg/storage/selection_predicate.go`). Field values are read through the
 * kind's field readers, so each kind supports exactly the field selectors it declares.
 */
import {
  type ApiObject,
  badRequest,
  checkSupportedFields,
  type FieldSelector,
  isFieldSelectorParseError,
  isLabelSelectorParseError,
  type Kind,
  parseFieldSelector,
  parseSelector,
  type Selector,
} from '@platform/api';

import { type ListOptions } from '../rest/rest';

/** A compiled predicate; undefined when the options select everything. */
export type Predicate = ((obj: ApiObject) => boolean) | undefined;

/** Compiles the selectors of `o` for `kind`; throws a 400 StatusError naming what is wrong. */
export function selectionPredicate(kind: Kind, o: ListOptions): Predicate {
  let labels: Selector | undefined;
  let fields: FieldSelector | undefined;
  if (o.labelSelector) {
    try {
      labels = parseSelector(o.labelSelector);
    } catch (err) {
      if (isLabelSelectorParseError(err)) throw badRequest(`unable to parse labelSelector: ${err.message}`);
      throw err;
    }
    if (labels.isEmpty()) labels = undefined;
  }
  if (o.fieldSelector) {
    try {
      fields = checkSupportedFields(parseFieldSelector(o.fieldSelector), Object.keys(kind.fields));
    } catch (err) {
      if (isFieldSelectorParseError(err)) throw badRequest(err.message);
      throw err;
    }
    if (fields.isEmpty()) fields = undefined;
  }
  if (!labels && !fields) return undefined;
  const readers = fields ? fields.requirements().map((r) => [r.field, kind.fields[r.field]] as const) : [];
  return (obj) => {
    if (labels && !labels.matches(obj.metadata?.labels)) return false;
    if (fields) {
      const set: Record<string, string> = {};
      for (const [name, read] of readers) set[name] = read ? read(obj as never) : '';
      if (!fields.matches(set)) return false;
    }
    return true;
  };
}
