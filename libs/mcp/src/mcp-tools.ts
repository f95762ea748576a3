import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { Logger, McpConfig } from '@herald/core';
import type { Db } from '@herald/db';
import { Allowlist, defineTool } from '@herald/tools';
import type { ApprovalNeed, CallContext, LookupFunction, SandboxChoice, Tool } from '@herald/tools';
import { resultText } from './call-result.ts';
import { freezeTools, loadFrozenTools, storeFrozenTools } from './frozen-tools.ts';
import type { FrozenTool } from './frozen-tools.ts';
import { loadProfileServers } from './profile-servers.ts';
import { connectServer } from './server-connection.ts';
import type { McpConnection } from './server-connection.ts';
import { isStdio } from './server-config.ts';
import type { ServerConfig, ServerMap } from './server-config.ts';
import { ServerPool } from './server-pool.ts';

/** Sessions whose frozen lists a worker keeps in memory; the oldest is dropped first. */
const FROZEN_CACHE_SESSIONS = 10_000;

/** Marks arguments that name the session's workspace: such a server runs once per session. */
export const WORKSPACE_PLACEHOLDER = '${workspace}';

export interface McpToolsOptions {
  db: Db;
  config: McpConfig;
  /** The operator's servers (HERALD_MCP_FILE, loaded with loadMcpFile). */
  servers: ServerMap;
  sandbox: SandboxChoice;
  /** The worker's environment: env_from and headers_from variables are read from it. */
  env: Readonly<Record<string, string | undefined>>;
  /** HERALD_SANDBOX_NETWORK: a stdio server gets the network when `mcp` or `mcp:<name>` is listed. */
  networkToolsets: readonly string[];
  /** HERALD_WEB_ALLOWLIST: private addresses HTTP servers may reach anyway, as for web_extract. */
  webAllowlist: readonly string[];
  workspaceRoot: string;
  logger?: Logger | undefined;
  lookup?: LookupFunction | undefined;
}

/** A session's MCP tools as Herald tools, and the bundles their toolsets join. */
export interface SessionTools {
  tools: Tool[];
  joins: Record<string, string[]>;
}

/** A server whose tools could not be listed: its tools are not offered until it answers. */
export interface DownServer {
  server: string;
  error: string;
}

/** Where a server runs: its key in the pool, its workspace and its arguments with the placeholder filled. */
interface Placement {
  key: string;
  workspace: string;
  server: ServerConfig;
}

function joinsOf(frozen: readonly FrozenTool[]): Record<string, string[]> {
  const joins: Record<string, string[]> = {};
  for (const toolset of [...new Set(frozen.map((tool) => `mcp:${tool.server}`))].sort()) {
    const server = toolset.slice(4);
    joins.mcp = [...(joins.mcp ?? []), toolset];
    for (const bundle of frozen.find((tool) => tool.server === server)?.toolsets ?? []) joins[bundle] = [...(joins[bundle] ?? []), toolset];
  }
  return joins;
}

function approvalNeed(frozen: FrozenTool): ApprovalNeed | null {
  if (frozen.approval === 'never') return null;
  if (frozen.approval === 'dangerous' && frozen.readOnly && !frozen.destructive) return null;
  const why = frozen.approval === 'always' ? 'every call of this server needs approval' : frozen.destructive ? 'it may change or delete data' : 'it is not marked read-only';
  return { patternKey: `mcp:${frozen.name}`, reason: `${frozen.tool} on the MCP server ${frozen.server}: ${why}` };
}

/**
 * MCP servers' tools for the worker: each session's list discovered at its first turn and frozen
 * (session_mcp_tools), calls run on the pool's connections under the sandbox and SSRF rules.
 */
export class McpTools {
  readonly #options: McpToolsOptions;
  readonly #pool: ServerPool;
  readonly #allowlist: Allowlist;
  readonly #frozenBySession = new Map<string, FrozenTool[]>();

  constructor(options: McpToolsOptions) {
    this.#options = options;
    this.#pool = new ServerPool({ idleMs: options.config.idleMs, logger: options.logger });
    this.#allowlist = new Allowlist(options.webAllowlist);
  }

  /** Whether `name` is one of the operator's servers (HERALD_MCP_FILE) rather than a profile's. */
  isOperatorServer(name: string): boolean {
    return Object.hasOwn(this.#options.servers, name);
  }

  get pool(): ServerPool {
    return this.#pool;
  }

  /** The operator's servers, then the profile's own (a profile cannot replace an operator's server). */
  async serversFor(profileId: string): Promise<ServerMap> {
    const own = await loadProfileServers(this.#options.db, profileId);
    const allowed = Object.entries(own).filter(([name, server]) => !Object.hasOwn(this.#options.servers, name) && (!isStdio(server) || this.#options.config.allowedCommands.includes(server.command)));
    return { ...Object.fromEntries(allowed), ...this.#options.servers };
  }

  /**
   * The session's MCP tools: the frozen list, or on the session's first turn (no prompt yet) the
   * servers' tools now, frozen. A session that began before any server existed keeps none.
   */
  async sessionTools(session: { sessionId: string; profileId: string; workspaceDir: string; firstTurn: boolean }): Promise<SessionTools> {
    const frozen = await this.#frozen(session);
    return { tools: frozen.map((tool) => this.#tool(tool)), joins: joinsOf(frozen) };
  }

  /**
   * A session's list never changes, so each worker reads it once (a turn's round trips are
   * counted: docs/decisions/2026-12-02-turn-round-trips.md). No row means none: a session with no
   * MCP tools costs no write, and one read per worker.
   */
  async #frozen(session: { sessionId: string; profileId: string; workspaceDir: string; firstTurn: boolean }): Promise<FrozenTool[]> {
    const cached = this.#frozenBySession.get(session.sessionId);
    if (cached) return cached;
    let frozen: FrozenTool[];
    if (session.firstTurn) {
      const servers = await this.serversFor(session.profileId);
      // With servers, the list is stored even when empty: a resumed first turn finds what was offered.
      frozen = Object.keys(servers).length === 0 ? [] : await storeFrozenTools(this.#options.db, session.sessionId, (await this.#discover(servers, session.profileId, session.workspaceDir)).frozen);
    } else {
      frozen = (await loadFrozenTools(this.#options.db, session.sessionId)) ?? [];
    }
    // Only a list fixed for good is kept: a first turn's may still lose a race to another worker's.
    if (!session.firstTurn || frozen.length > 0) this.#remember(session.sessionId, frozen);
    return frozen;
  }

  #remember(sessionId: string, frozen: FrozenTool[]): void {
    this.#frozenBySession.set(sessionId, frozen);
    if (this.#frozenBySession.size > FROZEN_CACHE_SESSIONS) {
      const oldest = this.#frozenBySession.keys().next().value;
      if (oldest !== undefined) this.#frozenBySession.delete(oldest);
    }
  }

  /**
   * What a session of the profile starting now would be offered, found the same way and stored
   * nowhere (`herald tools`), with the servers that did not answer.
   */
  async discoverTools(profileId: string, workspaceDir: string): Promise<SessionTools & { down: DownServer[] }> {
    const { frozen, down } = await this.#discover(await this.serversFor(profileId), profileId, workspaceDir);
    return { tools: frozen.map((tool) => this.#tool(tool)), joins: joinsOf(frozen), down };
  }

  async #discover(servers: ServerMap, profileId: string, workspaceDir: string): Promise<{ frozen: FrozenTool[]; down: DownServer[] }> {
    const taken = new Set<string>();
    const frozen: FrozenTool[] = [];
    const down: DownServer[] = [];
    for (const name of Object.keys(servers).sort()) {
      const server = servers[name] as ServerConfig;
      try {
        const listed = await this.listTools(profileId, name, server, workspaceDir);
        frozen.push(...freezeTools(name, server, listed, taken));
      } catch (error) {
        // The session goes on without this server's tools; the next session tries again.
        this.#options.logger?.warn({ profileId, server: name, err: error }, 'MCP server unavailable; its tools are not offered in this session');
        const cause = (error as { cause?: { code?: unknown } }).cause?.code;
        down.push({ server: name, error: `${(error as Error).message}${typeof cause === 'string' ? `: ${cause}` : ''}` });
      }
    }
    return { frozen, down };
  }

  /** A server's tools as it lists them now (discovery, `herald mcp list` and `test`). */
  async listTools(profileId: string, name: string, server: ServerConfig, workspaceDir: string) {
    const placement = await this.#place(profileId, name, server, workspaceDir);
    const timeoutMs = server.timeout_ms ?? this.#options.config.timeoutMs;
    return this.#pool.use(
      placement.key,
      () => this.#connect(name, placement),
      (connection) => connection.listTools(timeoutMs),
      AbortSignal.timeout(timeoutMs * 2),
    );
  }

  async #place(profileId: string, name: string, server: ServerConfig, workspaceDir: string): Promise<Placement> {
    if (!isStdio(server)) return { key: `${profileId}\u0000${name}\u0000`, workspace: '', server };
    const perSession = server.args.some((arg) => arg.includes(WORKSPACE_PLACEHOLDER));
    const workspace = perSession ? workspaceDir : join(this.#options.workspaceRoot, profileId, '.mcp', name);
    await mkdir(workspace, { recursive: true });
    const args = server.args.map((arg) => arg.replaceAll(WORKSPACE_PLACEHOLDER, workspace));
    return { key: `${profileId}\u0000${name}\u0000${workspace}`, workspace, server: { ...server, args } };
  }

  #connect(name: string, placement: Placement): Promise<McpConnection> {
    const { sandbox, notice } = this.#options.sandbox;
    const network = this.#options.networkToolsets.some((toolset) => toolset === 'mcp' || toolset === `mcp:${name}`);
    return connectServer(placement.server, {
      sandbox,
      sandboxNotice: notice ?? '',
      env: this.#options.env,
      workspace: placement.workspace,
      network,
      allowlist: this.#allowlist,
      lookup: this.#options.lookup,
      maxMessageBytes: this.#options.config.maxMessageBytes,
      timeoutMs: placement.server.timeout_ms ?? this.#options.config.timeoutMs,
    });
  }

  #tool(frozen: FrozenTool): Tool {
    return defineTool({
      name: frozen.name,
      toolset: `mcp:${frozen.server}`,
      description: frozen.description,
      guidance: '',
      // The server validates its own arguments; the gate only makes sure they are an object.
      schema: z.record(z.string(), z.unknown()),
      parameters: frozen.parameters,
      // Only a tool its server calls read-only is repeated after a crash.
      replaySafe: frozen.readOnly,
      needsApproval: () => approvalNeed(frozen),
      execute: (args, context) => this.#call(frozen, args, context),
    });
  }

  async #call(frozen: FrozenTool, args: Record<string, unknown>, context: CallContext): Promise<string> {
    const server = (await this.serversFor(context.profileId))[frozen.server];
    if (!server) throw new Error(`the MCP server ${frozen.server} is no longer configured`);
    const placement = await this.#place(context.profileId, frozen.server, server, context.workspaceDir);
    const timeoutMs = server.timeout_ms ?? this.#options.config.timeoutMs;
    const result = await this.#pool.use(
      placement.key,
      () => this.#connect(frozen.server, placement),
      async (connection) => {
        try {
          return await connection.callTool(frozen.tool, args, { signal: context.signal, timeoutMs });
        } catch (error) {
          if (context.signal.aborted) throw error;
          throw new Error(callFailure(frozen.server, timeoutMs, connection, error));
        }
      },
      context.signal,
    );
    const text = resultText(result);
    if (result.isError === true) throw new Error(text === '' ? 'the server reported an error' : text);
    return text;
  }

  /** Stops every server this worker started (shutdown). */
  close(): Promise<void> {
    return this.#pool.close();
  }
}

/** What the model reads when a call fails: a timeout, a server that died, or the server's own error. */
function callFailure(server: string, timeoutMs: number, connection: McpConnection, error: unknown): string {
  const message = (error as Error)?.message ?? String(error);
  if (/timed out/i.test(message)) return `the MCP server ${server} did not answer within ${timeoutMs} ms`;
  if (connection.closed) return `the MCP server ${server} stopped during the call (${connection.closeReason ?? message}); it is restarted on the next call`;
  return message;
}
