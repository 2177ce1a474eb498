// Lets a plain `node` process (the SQLite writer worker when run from source, crash-test children) require the
// TypeScript sources directly, transpiled file by file by the TypeScript compiler, so that such tests do not depend
// on a prior build.
const fs = require('node:fs');
const ts = require('typescript');

require.extensions['.ts'] = function compileTs(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const { outputText } = ts.transpileModule(source, {
    fileName: filename,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
      sourceMap: false,
    },
  });
  module._compile(outputText, filename);
};
