/** null when the platform knows the bot token; otherwise why not, in words (`herald init` shows it). */
export type TokenCheck = string | null;

const CHECK_MS = 10_000;

export interface ProbeOptions {
  method?: 'GET' | 'POST';
  /**
   * Why a 2xx answer still refuses the token, from its JSON body (Slack's Web API answers 200 with
   * `{"ok": false, "error": "invalid_auth"}`); null: accepted. Unset: any 2xx accepts it.
   */
  refusal?: (body: unknown) => string | null;
}

/** One request the platform answers 2xx only for a token it knows: its status and a little of its body, or the network's reason. */
export async function probeToken(url: string, headers: Readonly<Record<string, string>> = {}, options: ProbeOptions = {}): Promise<TokenCheck> {
  try {
    const response = await fetch(url, { method: options.method ?? 'GET', headers, signal: AbortSignal.timeout(CHECK_MS) });
    if (response.ok) return options.refusal ? options.refusal(await response.json()) : null;
    const text = (await response.text()).slice(0, 200);
    return `${response.status} ${response.statusText}${text ? `: ${text}` : ''}`;
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ?? cause?.message ?? (error as Error).message;
  }
}
