/** Field selectors: the `fieldSelector` syntax, escaping, matching and per-kind supported fields. */
export * from './selector';
export * from './field-labels';
