/**
 * The default of `--advertise-address` (Document 2: "blank uses `--bind-address`; if that is unspecified, the host
 * default interface"; Kubernetes: `ServerRunOptions.DefaultAdvertiseAddress` → `ChooseHostInterface`).
 */
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';

/** True for the addresses that mean "every interface". */
export function isUnspecifiedAddress(ip: string): boolean {
  return ip === '' || ip === '0.0.0.0' || ip === '::' || ip === '0:0:0:0:0:0:0:0';
}

/**
 * The address this server advertises: `advertise` when given; else the bind address when it names one; else the
 * first IPv4 (then IPv6) address of a non-loopback, non-link-local interface; else `127.0.0.1`.
 * `interfaces` is injectable for tests.
 */
export function defaultAdvertiseAddress(
  advertise: string,
  bindAddress: string,
  interfaces: () => NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces,
): string {
  if (advertise) return advertise;
  if (!isUnspecifiedAddress(bindAddress)) return bindAddress;
  const candidates = Object.values(interfaces())
    .flatMap((list) => list ?? [])
    .filter((i) => !i.internal && !(i.family === 'IPv6' && i.address.toLowerCase().startsWith('fe80:')));
  const v4 = candidates.find((i) => i.family === 'IPv4');
  const v6 = candidates.find((i) => i.family === 'IPv6');
  return (v4 ?? v6)?.address ?? '127.0.0.1';
}
