export * from './config';
export * from './kms';
export * from './providers';
