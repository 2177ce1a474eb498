/** metav1.Time and metav1.MicroTime: formatting, parsing, Protobuf shape, and injectable clocks. */
export * from './time';
