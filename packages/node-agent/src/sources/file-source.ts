/**
 * The file source (`--pod-manifest-path`, checked every `--file-check-frequency`): a directory of manifests (files
 * whose names start with a dot are ignored) or one file. Each check hands the whole set to `onPods`; a file that
 * cannot be parsed is logged and left out, as the kubelet does.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { type Pod } from '@platform/api';
import { type Logger } from '@platform/common';

import { parseManifests, staticPod } from './static-pod';

/** Reads the manifests once. */
export function readManifestPath(path: string, nodeName: string, log: Logger): Pod[] {
  let files: string[];
  try {
    files = statSync(path).isDirectory()
      ? readdirSync(path)
          .filter((f) => !f.startsWith('.'))
          .sort()
          .map((f) => join(path, f))
          .filter((f) => statSync(f).isFile())
      : [path];
  } catch (err) {
    log.debug('Cannot read the static pod path', { path, err: String(err) });
    return [];
  }
  const pods: Pod[] = [];
  for (const f of files) {
    try {
      for (const m of parseManifests(readFileSync(f, 'utf8'))) pods.push(staticPod(m, 'file', nodeName));
    } catch (err) {
      log.warn('Could not process manifest file', { path: f, err: (err as Error).message });
    }
  }
  return pods;
}

/** Polls the path until `signal` aborts. */
export function runFileSource(
  path: string,
  nodeName: string,
  periodMs: number,
  onPods: (pods: Pod[]) => void,
  log: Logger,
  signal: AbortSignal,
): void {
  let timer: NodeJS.Timeout | undefined;
  signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  const tick = (): void => {
    if (signal.aborted) return;
    onPods(readManifestPath(path, nodeName, log));
    timer = setTimeout(tick, periodMs);
  };
  tick();
}
