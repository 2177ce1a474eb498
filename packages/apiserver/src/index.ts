/** The @platform/apiserver package. */
export const PACKAGE = '@platform/apiserver';
