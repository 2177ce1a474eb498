/** The @platform/common package. */
export const PACKAGE = '@platform/common';
