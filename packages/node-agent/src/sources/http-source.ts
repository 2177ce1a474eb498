/**
 * The HTTP source (`--manifest-url` with `--manifest-url-header`, checked every `--http-check-frequency`): the URL
 * answers one pod, several YAML documents or a PodList. A failed fetch keeps the previous set (the kubelet logs and
 * goes on); an empty 200 answer means no pods.
 */
import { type Pod } from '@platform/api';
import { type Logger } from '@platform/common';

import { parseManifests, staticPod } from './static-pod';

/** Fetches the manifests once; throws on failure. */
export async function fetchManifests(url: string, headers: string[], nodeName: string): Promise<Pod[]> {
  const h = new Headers();
  for (const line of headers) {
    const i = line.indexOf(':');
    h.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
  }
  const res = await fetch(url, { headers: h, signal: AbortSignal.timeout(30_000) });
  if (res.status !== 200) throw new Error(`${url}: status ${res.status}`);
  const text = await res.text();
  return parseManifests(text).map((m) => staticPod(m, 'http', nodeName));
}

/** Polls the URL until `signal` aborts. */
export function runHttpSource(
  url: string,
  headers: string[],
  nodeName: string,
  periodMs: number,
  onPods: (pods: Pod[]) => void,
  log: Logger,
  signal: AbortSignal,
): void {
  const tick = async (): Promise<void> => {
    if (signal.aborted) return;
    try {
      onPods(await fetchManifests(url, headers, nodeName));
    } catch (err) {
      log.info('Failed to read pods from URL', { url, err: (err as Error).message });
    }
    if (signal.aborted) return;
    timer = setTimeout(() => void tick(), periodMs);
  };
  let timer: NodeJS.Timeout | undefined;
  signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  void tick();
}
