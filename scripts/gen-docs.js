#!/usr/bin/env node
// Generates docs/reference/*.md from the option definitions of every package that exports `referencePages`
// from its root (built lib/). `node scripts/gen-docs.js` writes the pages; `--check` only reports pages that differ
// (exit 1). Run `npm run build` first: the pages come from the compiled packages.
const { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const outDir = join(root, 'docs', 'reference');

function packagesWithPages() {
  const dir = join(root, 'packages');
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const lib = join(dir, name, 'lib', 'index.js');
    if (!existsSync(lib)) continue;
    let mod;
    try {
      mod = require(lib);
    } catch (err) {
      console.error(`cannot load packages/${name}/lib/index.js (run \`npm run build\`): ${err.message}`);
      process.exit(1);
    }
    if (typeof mod.referencePages === 'function' && typeof mod.renderReferencePage === 'function') {
      out.push({ name, pages: mod.referencePages(), render: mod.renderReferencePage });
    } else if (typeof mod.referencePages === 'function') {
      // Daemons export their pages; the renderer lives in @platform/common.
      const common = require(join(dir, 'common', 'lib', 'index.js'));
      out.push({ name, pages: mod.referencePages(), render: common.renderReferencePage });
    }
  }
  return out;
}

function main() {
  const check = process.argv.includes('--check');
  if (!existsSync(join(root, 'packages', 'common', 'lib', 'index.js'))) {
    console.error('packages/common/lib is missing: run `npm run build` first');
    process.exit(1);
  }
  mkdirSync(outDir, { recursive: true });
  const seen = new Set();
  let stale = 0;
  for (const { name, pages, render } of packagesWithPages()) {
    for (const page of pages) {
      if (seen.has(page.file)) {
        console.error(`${name}: reference page ${page.file} is produced by two packages`);
        process.exit(1);
      }
      seen.add(page.file);
      const file = join(outDir, page.file);
      const text = render(page);
      const current = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
      if (current === text) continue;
      if (check) {
        console.error(`docs/reference/${page.file} is out of date`);
        stale++;
      } else {
        writeFileSync(file, text);
        console.log(`wrote docs/reference/${page.file}`);
      }
    }
  }
  if (stale > 0) {
    console.error('run `npm run docs` to regenerate');
    process.exit(1);
  }
}

main();
