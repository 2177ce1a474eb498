/**
 * @platform/api — the API types, defined once, and their views: scheme, validation and defaulting, Protobuf,
 * OpenAPI, Table; Status errors; label and field selectors; quantities, durations and times.
 */
export * from './schema/schema';
export { decodeInto, stripNulls, type DecodeResult } from './schema/decode';
export { protoType, toProto, fromProto, unknownType } from './schema/protobuf';
export * from './meta/v1/types';
export * from './scheme/kind';
export * from './scheme/scheme';
export * from './codec/codec';
export * from './status/errors';
export * from './table/table';
export * from './openapi/openapi';
export * from './kinds';
/** Field errors, as Go's `field` package: `field.invalid(path, value, detail)`, `field.required(path)`, ... */
export * as field from './validation/field-errors';
export {
  type FieldError,
  type FieldErrorType,
  FieldPath,
  aggregateMessage,
  fieldErrorBody,
  fieldErrorToString,
} from './validation/field-errors';
/** Go's `%q` and `%v` printing, for messages that must read exactly as Kubernetes' (CRD schema validation). */
export { goNumber, goQuote } from './validation/go-format';
export * from './validation/names';
export * from './validation/object-meta';
export * from './labels';
export * from './quantity';
export * from './duration';
export * from './time';
export * from './fields';
