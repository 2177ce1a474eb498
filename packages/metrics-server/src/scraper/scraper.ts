/**
 * The scraper (model: metrics-server 0.5 `pkg/scraper/scraper.go` and `client/resource/client.go`): one round asks
 * every node's agent for `/metrics/resource` at once, each request bounded by the round's timeout, and returns what
 * the nodes that answered reported. HTTPS with the agent client credentials (a client certificate, or the bearer
 * token of the metrics server's own client configuration), verifying the agent's certificate against
 * `--agent-certificate-authority` (or the system roots) unless `--agent-insecure-tls`; plain HTTP with
 * `--deprecated-agent-completely-insecure`.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';

import { type Node } from '@platform/api';
import { type Logger } from '@platform/common';

import { agentLocation } from './address';
import { decodeResourceMetrics, type NodeBatch } from './decode';

/** How the agents are reached. */
export interface ScraperConfig {
  port: number;
  useNodeStatusPort: boolean;
  preferredAddressTypes: readonly string[];
  /** PEM of the authorities of the agents' serving certificates; the system roots when absent. */
  ca?: Buffer;
  insecureSkipTlsVerify: boolean;
  /** Plain HTTP, no credentials (`--deprecated-agent-completely-insecure`). */
  completelyInsecure: boolean;
  cert?: Buffer;
  key?: Buffer;
  /** The bearer token (read at each request: a token file may rotate). */
  token?: () => string | undefined;
  /** Bound of one request (ms). */
  timeoutMs: number;
}

/** The largest answer read from an agent. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;

/** What a round found. */
export interface ScrapeRound {
  /** By node name: the nodes that answered. */
  batches: Map<string, NodeBatch>;
  /** By node name: why the others did not. */
  errors: Map<string, string>;
}

/** Observations of each request (`metrics_server_kubelet_*`). */
export interface ScrapeObserver {
  request(node: string, ok: boolean, seconds: number): void;
}

/** Scrapes the agents of the nodes it is given. */
export class Scraper {
  private readonly agent: Agent;

  constructor(
    private readonly c: ScraperConfig,
    private readonly log: Logger,
    private readonly observer?: ScrapeObserver,
  ) {
    this.agent = new Agent({
      keepAlive: true,
      maxSockets: 4,
      rejectUnauthorized: !c.insecureSkipTlsVerify,
      ...(c.ca ? { ca: c.ca } : {}),
      ...(c.cert && c.key ? { cert: c.cert, key: c.key } : {}),
    });
  }

  /** One round over `nodes`; never rejects. */
  async scrape(nodes: readonly Node[], signal: AbortSignal): Promise<ScrapeRound> {
    const round: ScrapeRound = { batches: new Map(), errors: new Map() };
    await Promise.all(
      nodes.map(async (node) => {
        const name = node.metadata?.name ?? '';
        const t0 = performance.now();
        try {
          round.batches.set(name, await this.scrapeNode(node, signal));
          this.observer?.request(name, true, (performance.now() - t0) / 1000);
        } catch (err) {
          round.errors.set(name, (err as Error).message);
          this.observer?.request(name, false, (performance.now() - t0) / 1000);
        }
      }),
    );
    // One line a round (a cluster of simulated nodes may have thousands that fail alike), each node at -v=2.
    if (round.errors.size) {
      const [node, err] = round.errors.entries().next().value as [string, string];
      this.log.warn('Failed to scrape nodes', { failed: round.errors.size, of: nodes.length, node, err });
      for (const [n, e] of round.errors) this.log.v(2).info('Failed to scrape node', { node: n, err: e });
    }
    return round;
  }

  /** The batch of one node; rejects with an Error saying what failed. */
  async scrapeNode(node: Node, signal: AbortSignal): Promise<NodeBatch> {
    const { host, port } = agentLocation(node, this.c);
    const scrapeTime = Date.now();
    const text = await this.get(host, port, '/metrics/resource', signal);
    return decodeResourceMetrics(text, scrapeTime);
  }

  private get(host: string, port: number, path: string, signal: AbortSignal): Promise<string> {
    const url = `${this.c.completelyInsecure ? 'http' : 'https'}://${host.includes(':') ? `[${host}]` : host}:${port}${path}`;
    return new Promise((resolve, reject) => {
      const token = this.c.completelyInsecure ? undefined : this.c.token?.();
      const onResponse = (res: IncomingMessage): void => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BODY_BYTES) req.destroy(new Error(`${url}: answer larger than ${MAX_BODY_BYTES} bytes`));
          else chunks.push(c);
        });
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200)
            return reject(new Error(`request to ${url} failed: ${res.statusCode ?? 0} ${body.trim().slice(0, 200)}`));
          resolve(body);
        });
        res.on('error', reject);
      };
      const options = {
        host,
        port,
        path,
        method: 'GET',
        signal,
        timeout: this.c.timeoutMs,
        headers: { Accept: 'text/plain', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      };
      const req = this.c.completelyInsecure
        ? httpRequest(options, onResponse)
        : httpsRequest({ ...options, agent: this.agent }, onResponse);
      req.on('timeout', () => req.destroy(new Error(`request to ${url} timed out after ${this.c.timeoutMs} ms`)));
      req.on('error', (err) => reject(new Error(`unable to fetch metrics from node ${url}: ${err.message}`)));
      req.end();
    });
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.agent.destroy();
  }
}
