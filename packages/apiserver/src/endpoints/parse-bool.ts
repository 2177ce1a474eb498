/**
 * Boolean query parameters as Kubernetes reads them: Go's `strconv.ParseBool`, which takes `1 t T TRUE true True` and
 * `0 f F FALSE false False` (the Python client sends `watch=True`). Anything else is not a boolean.
 */

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** The value of a boolean written as Go's `strconv.ParseBool` reads it, or undefined when it is not one. */
export function parseGoBool(v: string): boolean | undefined {
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  return undefined;
}

/** True when a parameter is present and a true boolean (a bad or absent value is false, never an error). */
export function isTrueParam(v: string | null): boolean {
  return v !== null && parseGoBool(v) === true;
}
