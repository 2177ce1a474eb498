import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { type ReferencePage, referencePages, renderReferencePage } from './reference';

const REFERENCE_DIR = join(__dirname, '..', '..', '..', '..', 'docs', 'reference');

describe('generated reference pages', () => {
  it.each(referencePages().map((p) => [p.file, p] as [string, ReferencePage]))(
    'docs/reference/%s matches the option definitions',
    (file, page) => {
      let committed: string;
      try {
        committed = readFileSync(join(REFERENCE_DIR, file), 'utf8');
      } catch {
        throw new Error(`docs/reference/${file} is missing: run npm run docs`);
      }
      if (committed !== renderReferencePage(page)) {
        throw new Error(`docs/reference/${file} differs from the option definitions: run npm run docs`);
      }
    },
  );

  it('lists every shared family with type, default, help and deprecation', () => {
    const text = renderReferencePage(referencePages()[0]!);
    for (const section of [
      'Generic',
      'Secure serving',
      'Authentication',
      'Authorization',
      'Debugging',
      'Leader election',
      'Logging',
      'Metrics',
      'Feature gate',
      'Feature gate (node agent)',
    ]) {
      expect(text).toContain(`\n## ${section} flags\n`);
    }
    expect(text).toContain(
      '| `--log-flush-frequency` | duration | `5s` | Maximum number of seconds between log flushes |',
    );
    expect(text).toContain('| `-v`, `--v` | Level | `0` |');
    expect(text).toContain(
      '| `--feature-gates` | mapStringBool |  | **Deprecated:** This parameter should be set via the config file',
    );
    expect(text).toContain('IndexedJob=true\\|false (ALPHA - default=false)');
  });
});
