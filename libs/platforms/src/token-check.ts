/** null when the platform knows the bot token; otherwise why not, in words (`herald init` shows it). */
export type TokenCheck = string | null;

const CHECK_MS = 10_000;

/** One GET the platform answers 2xx only for a token it knows: its status and a little of its body, or the network's reason. */
export async function probeToken(url: string, headers: Readonly<Record<string, string>> = {}): Promise<TokenCheck> {
  try {
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(CHECK_MS) });
    if (response.ok) return null;
    const text = (await response.text()).slice(0, 200);
    return `${response.status} ${response.statusText}${text ? `: ${text}` : ''}`;
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ?? cause?.message ?? (error as Error).message;
  }
}
