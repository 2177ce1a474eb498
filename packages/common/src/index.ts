/** The @platform/common package: the component base shared by every daemon. */
export * from './logging/config';
export * from './logging/format';
export * from './logging/logger';
export * from './logging/create-logging';
