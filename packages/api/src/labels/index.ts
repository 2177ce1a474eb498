/** Label selectors: the selector string syntax, matching, the LabelSelector API object, node selectors, label sets. */
export * from './selector';
export * from './label-selector';
export * from './labels';
export * from './node-selector';
