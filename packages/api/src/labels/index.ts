/** Label selectors: the selector string syntax, matching, the LabelSelector API object, node selectors, label sets. */
export * from './selector';
// The structural LabelSelector types of label-selector.ts are not re-exported: meta/v1's types are the API's.
export {
  type LabelSelectorOperator,
  labelSelectorAsSelector,
  formatLabelSelector,
  matchesLabelSelector,
  parseToLabelSelector,
  validateLabelSelector,
  validateLabelSelectorRequirement,
} from './label-selector';
export * from './labels';
export * from './node-selector';
