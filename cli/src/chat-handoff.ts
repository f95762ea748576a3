import type { Config } from '@herald/core';

// `herald chat` after /handoff <platform>: the ingress only files the request; a worker carries it
// out. The chat follows the request (as Hermes' CLI does, every 0.5 s for up to 60 s) and says how
// it ended, so the person knows whether to carry on in the home chat or here.

const POLL_MS = 500;
const FOLLOW_MS = 60_000;

interface HandoffState {
  status?: 'pending' | 'running' | 'done' | 'failed';
  platform?: string;
  reason?: string | null;
  error?: { message: string };
}

export function isHandoffCommand(text: string): boolean {
  return /^\/handoff(@\S+)?\s+\S/i.test(text.trim());
}

/** The line to print once the session's latest handoff request has finished (or stopped being followed). */
export async function followHandoff(config: Config, sessionId: string): Promise<string> {
  const headers: Record<string, string> = config.api.token === undefined ? {} : { authorization: `Bearer ${config.api.token}` };
  const deadline = Date.now() + FOLLOW_MS;
  while (Date.now() < deadline) {
    const response = await fetch(`${config.api.url}/v1/sessions/${sessionId}/handoff`, { headers });
    const state = (await response.json()) as HandoffState;
    if (response.status !== 200) return `herald> ${state.error?.message ?? `handoff state unavailable (${response.status})`}`;
    if (state.status === 'done') return `herald> Handed off: carry on in the ${state.platform ?? ''} home chat. A new message here starts a fresh session.`;
    if (state.status === 'failed') return `herald> The handoff failed: ${state.reason ?? 'no reason given'}. This session is unchanged; /handoff again to retry.`;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return 'herald> The handoff is still pending: no worker has taken it yet. GET /v1/sessions/<id>/handoff shows how it ends.';
}
