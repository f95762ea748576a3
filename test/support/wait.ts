/**
 * Waiting without timing: poll a condition until it holds, or hold something back until the test
 * opens the gate. Timeouts here are generous limits for a shared machine, never what a test checks.
 */

export async function waitFor<T>(check: () => Promise<T | undefined | false>, options: { timeoutMs?: number; intervalMs?: number; what?: string } = {}): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      // Chaos tests check while connections are being killed: a failed check is "not yet".
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${options.what ?? 'condition'}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50));
  }
}

/** Something a fake holds back (a model answer, a transaction) until the test calls `open`. */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}
