/** Label selectors: the selector string syntax, matching, the LabelSelector API object and label sets. */
export * from './selector';
export * from './label-selector';
export * from './labels';
