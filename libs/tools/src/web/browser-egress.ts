import { connect, createServer, isIP } from 'node:net';
import type { Server, Socket } from 'node:net';
import { BlockedAddressError, assertAddressAllowed, pinnedLookup } from './ssrf.ts';
import type { Allowlist, LookupFunction } from './ssrf.ts';

/** A client that has not finished the SOCKS handshake by then is dropped. */
const HANDSHAKE_MS = 10_000;
/** How many refusals are kept for the tools to report (the newest). */
const KEPT_REFUSALS = 5;

/** SOCKS5 reply codes (RFC 1928 §6). */
const REPLY = { ok: 0, notAllowed: 2, refused: 5, commandNotSupported: 7, addressNotSupported: 8 } as const;

interface ConnectRequest {
  command: number;
  /** The host as the client named it: a name, an IPv4 or an IPv6 address; null for an unknown type. */
  host: string | null;
  port: number;
  /** Bytes of the request, so what follows it is the first data for the destination. */
  length: number;
}

/** The length of a complete greeting (VER NMETHODS METHODS...) at the start of `buffer`, or null. */
function greetingLength(buffer: Buffer): number | null {
  if (buffer.length < 2) return null;
  if (buffer[0] !== 5) throw new Error('not SOCKS5');
  return buffer.length < 2 + buffer[1]! ? null : 2 + buffer[1]!;
}

/** A complete request (VER CMD RSV ATYP ADDR PORT) at the start of `buffer`, or null. */
function parseRequest(buffer: Buffer): ConnectRequest | null {
  if (buffer.length < 5) return null;
  if (buffer[0] !== 5) throw new Error('not SOCKS5');
  const type = buffer[3];
  const [addressEnd, host] =
    type === 1
      ? [8, () => [...buffer.subarray(4, 8)].join('.')]
      : type === 3
        ? [5 + buffer[4]!, () => buffer.toString('latin1', 5, 5 + buffer[4]!)]
        : type === 4
          ? [20, () => Array.from({ length: 8 }, (_, i) => buffer.readUInt16BE(4 + i * 2).toString(16)).join(':')]
          : [4, () => null];
  if (buffer.length < addressEnd + 2) return null;
  return { command: buffer[1]!, host: host(), port: buffer.readUInt16BE(addressEnd), length: addressEnd + 2 };
}

function reply(code: number): Buffer {
  return Buffer.from([5, code, 0, 1, 0, 0, 0, 0, 0, 0]);
}

/**
 * A SOCKS5 proxy on loopback through which one browser context makes every connection: page
 * loads, each redirect hop, subresources, fetches and WebSockets, plain or TLS. Chromium hands it
 * the host name unresolved; the proxy resolves it once with web_extract's pinned lookup, checks
 * every address against the SSRF rules and connects to exactly the checked address, so neither a
 * redirect nor a WebSocket nor a name that changes its answer (DNS rebinding) reaches a private
 * address. It only relays bytes: TLS stays between Chromium and the site.
 */
export class EgressProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #allowlist: Allowlist;
  readonly #lookup: LookupFunction | undefined;
  #refusals: string[] = [];

  private constructor(allowlist: Allowlist, lookup: LookupFunction | undefined) {
    this.#allowlist = allowlist;
    this.#lookup = lookup;
    // Half-open on both legs: a side that finished sending may still be owed an answer.
    this.#server = createServer({ allowHalfOpen: true }, (client) => this.#accept(client));
  }

  static async start(allowlist: Allowlist, lookup?: LookupFunction): Promise<EgressProxy> {
    const proxy = new EgressProxy(allowlist, lookup);
    await new Promise<void>((resolve, reject) => {
      proxy.#server.once('error', reject);
      proxy.#server.listen(0, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  /** For Chromium's proxy setting. */
  get server(): string {
    return `socks5://127.0.0.1:${(this.#server.address() as { port: number }).port}`;
  }

  /** The refusals since the last call (the newest few), and forgets them. */
  takeRefusals(): string[] {
    const taken = this.#refusals;
    this.#refusals = [];
    return taken;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #track(socket: Socket): void {
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  }

  #accept(client: Socket): void {
    this.#track(client);
    client.setTimeout(HANDSHAKE_MS, () => client.destroy());
    let buffer = Buffer.alloc(0);
    let greeted = false;
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      try {
        if (!greeted) {
          const used = greetingLength(buffer);
          if (used === null) return;
          // Only "no authentication": the port is on loopback and serves this context alone.
          if (!buffer.subarray(2, used).includes(0)) return void client.end(Buffer.from([5, 0xff]));
          client.write(Buffer.from([5, 0]));
          buffer = buffer.subarray(used);
          greeted = true;
        }
        const request = parseRequest(buffer);
        if (request === null) return;
        client.off('data', onData);
        client.pause();
        client.setTimeout(0);
        void this.#connect(client, request, buffer.subarray(request.length));
      } catch {
        client.destroy();
      }
    };
    client.on('data', onData);
  }

  async #connect(client: Socket, request: ConnectRequest, early: Buffer): Promise<void> {
    if (request.command !== 1) return void client.end(reply(REPLY.commandNotSupported));
    if (request.host === null) return void client.end(reply(REPLY.addressNotSupported));
    const host = request.host.replace(/^\[|\]$/g, '');
    let upstream: Socket;
    try {
      // An address literal is checked here; a name in the lookup the socket connects with.
      if (isIP(host) !== 0) assertAddressAllowed(host, host, this.#allowlist);
      upstream = await new Promise<Socket>((resolve, reject) => {
        const socket = connect({ host, port: request.port, allowHalfOpen: true, lookup: pinnedLookup(this.#allowlist, this.#lookup) });
        socket.once('connect', () => resolve(socket));
        socket.once('error', reject);
      });
    } catch (error) {
      if (error instanceof BlockedAddressError) this.#refusals = [...this.#refusals, error.message].slice(-KEPT_REFUSALS);
      return void client.end(reply(error instanceof BlockedAddressError ? REPLY.notAllowed : REPLY.refused));
    }
    this.#track(upstream);
    // An end travels through the pipes; a broken leg breaks the other.
    upstream.once('error', () => client.destroy());
    client.once('error', () => upstream.destroy());
    client.write(reply(REPLY.ok));
    if (early.length > 0) upstream.write(early);
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  }
}
