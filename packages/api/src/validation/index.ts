/** Field errors and the name, label and metadata validation of Kubernetes 1.21. */
export * from './field-errors';
export * from './names';
export * from './object-meta';
export { goQuote, goNumber, byteLength } from './go-format';
