import type { CallContext } from '../src/shared/tool.ts';

/** A call context for tools that touch neither the database nor the person. */
export function offlineContext(overrides: Partial<CallContext> = {}): CallContext {
  return {
    sessionId: 's',
    turnId: 't',
    profileId: 'p',
    userId: 'u',
    platform: 'api',
    role: 'chat',
    db: undefined as never,
    signal: new AbortController().signal,
    workspaceDir: '/nonexistent',
    fencedWrite: () => Promise.reject(new Error('this tool never writes to the database')),
    toolCallId: 'call-1',
    showModel: () => false,
    askPerson: () => Promise.reject(new Error('this tool never asks the person')),
    parkOnRuns: () => {
      throw new Error('this tool never parks the turn');
    },
    ...overrides,
  };
}
