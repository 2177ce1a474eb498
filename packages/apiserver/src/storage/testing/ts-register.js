// Lets a plain `node` child process (crash tests) require the TypeScript sources directly, transpiled by @swc/core
// (already used by Jest), so that such tests do not depend on a prior build.
const fs = require('node:fs');
const swc = require('@swc/core');

require.extensions['.ts'] = function compileTs(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const { code } = swc.transformSync(source, {
    filename,
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};
