#!/usr/bin/env node
// Runs benchmark files: `npm run bench -- <suite> [<suite>...]` runs `packages/*/lib/**/<suite>.bench.js` (the
// compiled build; a suite that names no benchmark picks every one whose path contains it); with no name, all of
// them. When a benchmark has not been built (or its source is newer than the build), its `src/**/*.bench.ts` runs directly, transpiled file by file
// with the TypeScript compiler's `transpileModule` (typescript is a devDependency; no type checking).
// Each benchmark runs in its own Node process, one after the other, and prints its figures as a table. Figures are
// printed, never asserted: the exit code only says whether every benchmark ran.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

function walk(dir, suffix, out = []) {
  if (!fs.existsSync(dir)) return out;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') walk(p, suffix, out);
    } else if (entry.name.endsWith(suffix)) out.push(p);
  }
  return out;
}

function runTs(file) {
  const ts = require('typescript');
  require.extensions['.ts'] = function compileTs(module, filename) {
    const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
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
  require(file);
}

function main(argv) {
  if (argv[0] === '--run-ts') return runTs(path.resolve(argv[1]));
  const suites = argv.filter((a) => !a.startsWith('-'));
  const packages = path.join(root, 'packages');
  const benches = [];
  for (const pkg of fs.readdirSync(packages)) {
    const src = walk(path.join(packages, pkg, 'src'), '.bench.ts');
    for (const s of src) {
      const rel = path.relative(path.join(packages, pkg, 'src'), s).replace(/\.ts$/, '.js');
      const lib = path.join(packages, pkg, 'lib', rel);
      const useLib = fs.existsSync(lib) && fs.statSync(lib).mtimeMs >= fs.statSync(s).mtimeMs;
      benches.push({ name: path.relative(root, s), file: useLib ? lib : s, compiled: useLib });
    }
  }
  // A suite name picks the benchmark of that name (`apiserver` → apiserver.bench.ts); a name that is no benchmark's
  // picks every benchmark whose path contains it (`storage/` or a package name).
  const baseName = (b) => path.basename(b.name, '.bench.ts');
  const picks = (s, b) => (benches.some((o) => baseName(o) === s) ? baseName(b) === s : b.name.includes(s));
  const selected = benches.filter((b) => suites.length === 0 || suites.some((s) => picks(s, b)));
  if (selected.length === 0) {
    console.error(
      `no benchmark matches ${suites.join(', ') || '(any)'}; known: ${benches.map((b) => b.name).join(', ')}`,
    );
    process.exit(1);
  }
  let failed = 0;
  for (const b of selected) {
    console.log(`\n=== ${b.name}${b.compiled ? '' : ' (from source)'} ===`);
    const args = b.compiled ? [b.file] : [__filename, '--run-ts', b.file];
    const r = spawnSync(process.execPath, args, { stdio: 'inherit', cwd: root });
    if (r.status !== 0) {
      failed++;
      console.error(`benchmark ${b.name} failed with status ${r.status}`);
    }
  }
  process.exit(failed === 0 ? 0 : 1);
}

main(process.argv.slice(2));
