/**
 * Image garbage collection, as the kubelet's image GC manager does it: every pass notes when each image was first
 * seen and last used by a container; when the image filesystem's usage reaches `--image-gc-high-threshold` percent,
 * unused images are removed, least recently used first, until usage is back at `--image-gc-low-threshold`. An image
 * younger than `--minimum-image-ttl-duration` (since first seen) and the sandbox image (`--pod-infra-container-image`)
 * are never removed. Works on any `Runtime` with images (the remote one).
 */
import { statfs } from 'node:fs/promises';
import type { Image, Runtime } from '../runtime';

/** Capacity and free space of the image filesystem, bytes. */
export interface ImageFsStats {
  capacityBytes: number;
  availableBytes: number;
}

/** Options of `ImageGcManager`. */
export interface ImageGcOptions {
  /** `--image-gc-high-threshold` (85): usage percent at which collection runs; 100 disables it. */
  highThresholdPercent: number;
  /** `--image-gc-low-threshold` (80): usage percent collection frees down to. */
  lowThresholdPercent: number;
  /** `--minimum-image-ttl-duration` (2 minutes), ms. */
  minAgeMs: number;
  /** Never removed (the sandbox image). */
  pinnedImages?: string[];
  /** The image filesystem's stats; by default statfs of the mount point the runtime reports (CRI ImageFsInfo). */
  fsStats?: () => Promise<ImageFsStats>;
  now?: () => number;
}

interface ImageRecord {
  firstDetected: number;
  lastUsed: number;
  size: number;
}

/** What a collection did. */
export interface ImageGcResult {
  /** Bytes it had to free (0 when usage was under the high threshold). */
  wanted: number;
  freed: number;
  removed: string[];
}

export class ImageGcManager {
  private readonly records = new Map<string, ImageRecord>();
  private readonly now: () => number;

  constructor(
    private readonly runtime: Runtime,
    private readonly o: ImageGcOptions,
  ) {
    if (o.lowThresholdPercent > o.highThresholdPercent) {
      throw new Error('--image-gc-low-threshold must not be above --image-gc-high-threshold');
    }
    this.now = o.now ?? Date.now;
  }

  private async fsStats(): Promise<ImageFsStats> {
    if (this.o.fsStats) return this.o.fsStats();
    const fs = await this.runtime.imageFsInfo();
    const mount = fs[0]?.mountpoint;
    if (!mount) throw new Error('the runtime reports no image filesystem');
    const s = await statfs(mount);
    return { capacityBytes: s.blocks * s.bsize, availableBytes: s.bavail * s.bsize };
  }

  private pinned(img: Image): boolean {
    const pins = this.o.pinnedImages ?? [];
    return pins.some((p) => p === img.id || img.repoTags.includes(p) || img.repoDigests.includes(p));
  }

  /** Lists images and containers: notes new images and the ones in use now. Returns the images in use. */
  async detectImages(): Promise<Set<string>> {
    const now = this.now();
    const [images, containers] = await Promise.all([this.runtime.listImages(), this.runtime.listContainers()]);
    const used = new Set<string>();
    for (const c of containers) {
      for (const img of images) {
        if (img.id === c.imageRef || img.id === c.image || img.repoTags.includes(c.image)) used.add(img.id);
      }
    }
    const present = new Set(images.map((i) => i.id));
    for (const img of images) {
      let r = this.records.get(img.id);
      if (!r) {
        r = { firstDetected: now, lastUsed: 0, size: img.size };
        this.records.set(img.id, r);
      }
      r.size = img.size;
      if (used.has(img.id)) r.lastUsed = now;
    }
    for (const id of this.records.keys()) if (!present.has(id)) this.records.delete(id);
    return used;
  }

  /** One pass: collects when usage is at or over the high threshold. */
  async garbageCollect(): Promise<ImageGcResult> {
    const used = await this.detectImages();
    if (this.o.highThresholdPercent >= 100) return { wanted: 0, freed: 0, removed: [] };
    const fs = await this.fsStats();
    if (fs.capacityBytes <= 0) return { wanted: 0, freed: 0, removed: [] };
    const usage = fs.capacityBytes - fs.availableBytes;
    if ((usage * 100) / fs.capacityBytes < this.o.highThresholdPercent) return { wanted: 0, freed: 0, removed: [] };
    const wanted = Math.ceil(usage - (this.o.lowThresholdPercent * fs.capacityBytes) / 100);
    return this.freeSpace(wanted, used);
  }

  /** Removes unused images, least recently used first, until `bytes` are freed (or nothing removable is left). */
  async freeSpace(bytes: number, used?: Set<string>): Promise<ImageGcResult> {
    const inUse = used ?? (await this.detectImages());
    const now = this.now();
    const images = await this.runtime.listImages();
    const candidates = images
      .filter((i) => !inUse.has(i.id) && !this.pinned(i))
      .map((i) => ({ img: i, rec: this.records.get(i.id) ?? { firstDetected: now, lastUsed: 0, size: i.size } }))
      .filter(({ rec }) => now - rec.firstDetected >= this.o.minAgeMs)
      .sort((a, b) => a.rec.lastUsed - b.rec.lastUsed || a.rec.firstDetected - b.rec.firstDetected);
    const removed: string[] = [];
    let freed = 0;
    for (const { img } of candidates) {
      if (freed >= bytes) break;
      await this.runtime.removeImage({ image: img.id });
      this.records.delete(img.id);
      removed.push(img.id);
      freed += img.size;
    }
    return { wanted: bytes, freed, removed };
  }
}

/** The node status' images: names (tags, then digests) and size, largest first, at most `max` (0: none; -1: all). */
export async function nodeImages(
  runtime: Runtime,
  max: number,
): Promise<Array<{ names: string[]; sizeBytes: number }>> {
  if (max === 0) return [];
  const images = (await runtime.listImages()).sort((a, b) => b.size - a.size);
  const list = max < 0 ? images : images.slice(0, max);
  return list.map((i) => ({ names: [...i.repoTags, ...i.repoDigests], sizeBytes: i.size }));
}
