/**
 * What `platform status` says of each daemon beyond its health: its resident memory (from `/proc`), and for the
 * leader-elected ones (controller managers, schedulers) whether it holds its Lease — the daemon logs the Lease and its
 * own identity when it starts competing, and the Lease names its holder.
 */
import { existsSync, readFileSync } from 'node:fs';

import { requestJson } from './http';

/** The resident set size of process `pid` in bytes, when `/proc` tells (Linux). */
export function rssOf(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** The Lease (`namespace/name`) and identity a daemon last competed with, from its log. */
export function candidacyOf(logFile: string): { lease: string; identity: string } | undefined {
  if (!existsSync(logFile)) return undefined;
  const re = /"Attempting to acquire leader lease" lease="([^"/]+\/[^"]+)" identity="([^"]+)"/g;
  let last: { lease: string; identity: string } | undefined;
  for (const m of readFileSync(logFile, 'utf8').matchAll(re)) last = { lease: m[1]!, identity: m[2]! };
  return last;
}

/**
 * The holder of each Lease (`namespace/name`), read from the first API server that answers; a Lease that cannot be
 * read is left out.
 */
export async function leaseHolders(
  leases: readonly string[],
  servers: readonly string[],
  token: string,
  ca: string,
): Promise<Map<string, string>> {
  const holders = new Map<string, string>();
  for (const lease of new Set(leases)) {
    const [ns, name] = lease.split('/');
    for (const server of servers) {
      try {
        const a = await requestJson(`${server}/apis/coordination.platform/v1/namespaces/${ns}/leases/${name}`, {
          token,
          ca,
          timeoutMs: 2000,
        });
        const holder = (a.body as { spec?: { holderIdentity?: string } } | undefined)?.spec?.holderIdentity;
        if (a.status === 200 && holder) holders.set(lease, holder);
        if (a.status === 200 || a.status === 404) break;
      } catch {
        // that API server is down: try the next
      }
    }
  }
  return holders;
}
