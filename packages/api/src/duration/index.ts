/** Go durations: parsing and printing as Go's time package does, and the metav1.Duration JSON form. */
export * from './duration';
