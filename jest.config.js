// One Jest configuration for the whole repository. TypeScript is transpiled by ts-jest, file by file (type checking is
// `tsc --build`'s job, run before the tests by `npm test`). Packages import each other through their
// roots; here those roots map to the sources so that a test never runs against a stale build.
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/e2e'],
  testMatch: ['**/src/**/*.test.ts', '**/e2e/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/lib/'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.base.json', isolatedModules: true, diagnostics: false }],
  },
  moduleNameMapper: { '^@platform/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts' },
  globalSetup: '<rootDir>/scripts/jest-global-setup.js',
  reporters: ['default', '<rootDir>/scripts/summary-reporter.js'],
  testTimeout: 30000,
};
