import { spawnWithData } from '@herald/tools';
import type { ChildProcess } from 'node:child_process';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { LaunchSpec } from '@herald/tools';

/** The server's stderr kept for error messages: enough for a stack trace's head. */
const STDERR_CHARS = 2000;
/** After SIGTERM the server's process group gets this long before SIGKILL. */
const KILL_GRACE_MS = 2000;

/**
 * The MCP stdio transport over a process started from a sandbox's LaunchSpec. Unlike the SDK's
 * StdioClientTransport it bounds what the server may make us hold: a line longer than
 * `maxMessageBytes` closes the connection (the pending call fails, the server is restarted on
 * next use) instead of growing a buffer without end. The process leads its own group, so
 * stopping it stops what it started too.
 */
export class SandboxedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #spec: LaunchSpec;
  readonly #maxBytes: number;
  #child: ChildProcess | undefined;
  #chunks: Buffer[] = [];
  #buffered = 0;
  #stderr = '';
  #closed = false;

  constructor(spec: LaunchSpec, maxMessageBytes: number) {
    this.#spec = spec;
    this.#maxBytes = maxMessageBytes;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** The tail of what the server wrote to stderr, for the error a failed start reports. */
  get stderr(): string {
    return this.#stderr.trim();
  }

  async start(): Promise<void> {
    await this.#spec.prepare?.();
    return new Promise((resolve, reject) => {
      // As whom and with what filter the sandbox says (spawnWithData), in its own process group.
      const child = spawnWithData(this.#spec);
      this.#child = child;
      child.once('error', (error) => {
        reject(error);
        this.#fail(error);
      });
      child.once('spawn', () => resolve());
      child.once('exit', (code, signal) => this.#fail(new Error(`the server exited (${signal ?? `code ${code}`})${this.stderr ? `: ${this.stderr.slice(-500)}` : ''}`)));
      child.stdout?.on('data', (chunk: Buffer) => this.#read(chunk));
      child.stderr?.on('data', (chunk: Buffer) => {
        this.#stderr = (this.#stderr + chunk.toString('utf8')).slice(-STDERR_CHARS);
      });
      child.stdin?.on('error', (error) => this.onerror?.(error));
    });
  }

  #read(chunk: Buffer): void {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      this.#chunks.push(chunk.subarray(start, newline));
      const line = Buffer.concat(this.#chunks).toString('utf8');
      this.#chunks = [];
      this.#buffered = 0;
      start = newline + 1;
      this.#deliver(line);
      if (this.#closed) return;
    }
    const rest = chunk.subarray(start);
    this.#buffered += rest.length;
    if (this.#buffered > this.#maxBytes) {
      this.#chunks = [];
      this.#fail(new Error(`the server sent a message larger than ${Math.round(this.#maxBytes / 1024 / 1024)} MB; it was cut off and the server stopped`));
      return;
    }
    if (rest.length > 0) this.#chunks.push(rest);
  }

  #deliver(line: string): void {
    if (line.trim() === '') return;
    try {
      this.onmessage?.(deserializeMessage(line));
    } catch (error) {
      this.onerror?.(error as Error);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.#child?.stdin;
      if (!stdin || this.#closed) {
        reject(new Error('the server is not running'));
        return;
      }
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  #fail(error: Error): void {
    if (this.#closed) return;
    this.onerror?.(error);
    void this.close();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const child = this.#child;
    if (child && child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      const group = -child.pid;
      kill(group, 'SIGTERM');
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const timer = setTimeout(() => kill(group, 'SIGKILL'), KILL_GRACE_MS);
      await exited;
      clearTimeout(timer);
    }
    this.onclose?.();
  }
}

function kill(target: number, signal: NodeJS.Signals): void {
  try {
    process.kill(target, signal);
  } catch {
    // Gone already.
  }
}
