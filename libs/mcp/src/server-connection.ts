import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { Allowlist, LookupFunction, Sandbox } from '@herald/tools';
import { internalFetch, pinnedFetch } from './http-fetch.ts';
import { isStdio } from './server-config.ts';
import type { HttpServerConfig, ServerConfig, StdioServerConfig } from './server-config.ts';
import { SandboxedStdioTransport } from './stdio-transport.ts';

const CLIENT_INFO = { name: 'herald', version: '0.1.0' };
/** Most tools a server may list: a server is a guest in the prompt. */
const MAX_TOOLS = 200;

/** What a connection needs from the worker: its sandbox, environment and the SSRF rules. */
export interface ConnectOptions {
  sandbox: Sandbox | null;
  /** Why there is no sandbox (stdio servers are not started without one). */
  sandboxNotice: string;
  /** The worker's environment: only the variables a server names are read from it. */
  env: Readonly<Record<string, string | undefined>>;
  /** The server's writable directory (its workspace): the profile's or the session's. */
  workspace: string;
  network: boolean;
  allowlist: Allowlist;
  lookup?: LookupFunction | undefined;
  maxMessageBytes: number;
  timeoutMs: number;
}

function requireVariables(names: readonly string[], env: ConnectOptions['env']): void {
  const missing = names.filter((name) => (env[name] ?? '') === '');
  if (missing.length > 0) throw new Error(`the worker has no value for ${missing.join(', ')}`);
}

function stdioTransport(server: StdioServerConfig, options: ConnectOptions): SandboxedStdioTransport {
  if (options.sandbox === null) throw new Error(`stdio MCP servers need the tool sandbox: ${options.sandboxNotice}`);
  requireVariables(server.env_from, options.env);
  const spec = options.sandbox.launch({
    command: server.command,
    args: server.args,
    granted: server.env_from,
    workspace: options.workspace,
    cwd: server.cwd,
    network: options.network,
  });
  return new SandboxedStdioTransport(spec, options.maxMessageBytes);
}

function httpHeaders(server: HttpServerConfig, env: ConnectOptions['env']): Record<string, string> {
  requireVariables(Object.values(server.headers_from), env);
  return Object.fromEntries(Object.entries(server.headers_from).map(([header, variable]) => [header, env[variable] ?? '']));
}

function httpTransport(server: HttpServerConfig, options: ConnectOptions, kind: 'streamable-http' | 'sse'): Transport {
  const url = new URL(server.url);
  const fetch = server.internal === true ? internalFetch(options.maxMessageBytes) : pinnedFetch(options.allowlist, options.maxMessageBytes, options.lookup);
  const requestInit = { headers: httpHeaders(server, options.env) };
  return kind === 'sse' ? new SSEClientTransport(url, { fetch, requestInit }) : new StreamableHTTPClientTransport(url, { fetch, requestInit });
}

/** One live MCP session with one server: list its tools, call them, close it. */
export class McpConnection {
  readonly client: Client;
  readonly #transport: Transport;
  #closed = false;
  #closeReason: string | undefined;
  readonly #closedListeners: Array<(reason: string) => void> = [];

  constructor(client: Client, transport: Transport) {
    this.client = client;
    this.#transport = transport;
    client.onclose = () => this.#markClosed(this.#closeReason ?? 'the connection closed');
    client.onerror = (error) => {
      this.#closeReason ??= error.message;
    };
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Why the connection ended (the server exited, sent too much...), for the call that failed on it. */
  get closeReason(): string | undefined {
    return this.#closeReason;
  }

  get pid(): number | undefined {
    return this.#transport instanceof SandboxedStdioTransport ? this.#transport.pid : undefined;
  }

  onClosed(listener: (reason: string) => void): void {
    this.#closedListeners.push(listener);
  }

  #markClosed(reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#closeReason = reason;
    for (const listener of this.#closedListeners) listener(reason);
  }

  async listTools(timeoutMs: number): Promise<McpTool[]> {
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined && tools.length < MAX_TOOLS);
    return tools.slice(0, MAX_TOOLS);
  }

  async callTool(name: string, args: Record<string, unknown>, options: { signal: AbortSignal; timeoutMs: number }): Promise<CallToolResult> {
    const result = await this.client.callTool({ name, arguments: args }, undefined, {
      signal: options.signal,
      timeout: options.timeoutMs,
      maxTotalTimeout: options.timeoutMs,
    });
    return result as CallToolResult;
  }

  async close(): Promise<void> {
    this.#closeReason ??= 'stopped';
    await this.client.close().catch(() => undefined);
    this.#markClosed(this.#closeReason);
  }
}

async function open(transport: Transport, timeoutMs: number): Promise<McpConnection> {
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  const connection = new McpConnection(client, transport);
  try {
    await client.connect(transport, { timeout: timeoutMs });
  } catch (error) {
    await connection.close();
    // The error itself goes on (its HTTP status decides the SSE fallback), with the server's stderr.
    if (error instanceof Error && transport instanceof SandboxedStdioTransport && transport.stderr) error.message += ` (stderr: ${transport.stderr.slice(-300)})`;
    throw error;
  }
  return connection;
}

/** An HTTP error the SDK reports when a server has no Streamable HTTP endpoint (it may have SSE). */
function noStreamableHttp(error: unknown): boolean {
  return error instanceof StreamableHTTPError && [400, 404, 405].includes(error.code ?? 0);
}

/**
 * Connects to a server: stdio inside the sandbox, or HTTP. `auto` tries Streamable HTTP and falls
 * back to the older HTTP+SSE transport when the server answers 4xx to it, as the spec advises.
 */
export async function connectServer(server: ServerConfig, options: ConnectOptions): Promise<McpConnection> {
  if (isStdio(server)) return open(stdioTransport(server, options), options.timeoutMs);
  if (server.transport === 'sse') return open(httpTransport(server, options, 'sse'), options.timeoutMs);
  try {
    return await open(httpTransport(server, options, 'streamable-http'), options.timeoutMs);
  } catch (error) {
    if (server.transport === 'auto' && noStreamableHttp(error)) return open(httpTransport(server, options, 'sse'), options.timeoutMs);
    throw error;
  }
}
