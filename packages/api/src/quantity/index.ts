/** Resource quantities: exact parsing, arithmetic and canonical printing as Kubernetes does. */
export * from './quantity';
export * from './validation';
