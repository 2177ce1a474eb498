/** The @platform/api package. */
export const PACKAGE = '@platform/api';
