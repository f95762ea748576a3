import type { z } from 'zod';
import { integer } from './fields.ts';

/** Background processes of the process tool: how many, how long, how much output is kept. */
export interface ProcessesConfig {
  perSession: number;
  perWorker: number;
  /** Wall-clock life of one process; it is killed after it. */
  maxRuntimeMs: number;
  /** Output kept per process, the newest characters (a ring). */
  outputChars: number;
}

export const processesSchema = {
  HERALD_PROCESS_MAX_PER_SESSION: integer(1, 100).default(4),
  HERALD_PROCESS_MAX_PER_WORKER: integer(1, 1000).default(16),
  HERALD_PROCESS_MAX_RUNTIME_MS: integer(1000, 86_400_000).default(3_600_000),
  HERALD_PROCESS_OUTPUT_CHARS: integer(1000, 10_000_000).default(200_000),
};

type ProcessesEnv = { [K in keyof typeof processesSchema]: z.output<(typeof processesSchema)[K]> };

export function processesConfig(e: ProcessesEnv): ProcessesConfig {
  return {
    perSession: e.HERALD_PROCESS_MAX_PER_SESSION,
    perWorker: e.HERALD_PROCESS_MAX_PER_WORKER,
    maxRuntimeMs: e.HERALD_PROCESS_MAX_RUNTIME_MS,
    outputChars: e.HERALD_PROCESS_OUTPUT_CHARS,
  };
}
