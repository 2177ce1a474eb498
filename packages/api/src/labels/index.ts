/** Label selectors: the selector string syntax, matching, and the LabelSelector API object. */
export * from './selector';
export * from './label-selector';
