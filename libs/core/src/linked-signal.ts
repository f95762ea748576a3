/** A signal that aborts when any of its sources does, and lets go of them once disposed. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Removes its listeners from the sources; call it when the work the signal guards is over. */
  dispose(): void;
}

/**
 * AbortSignal.any without its cost in a long-running process. Node keeps a composite signal from
 * AbortSignal.any alive while it has an 'abort' listener and none of its sources has aborted; the
 * model SDKs add such a listener on every request and never remove it, so a composite over a
 * worker-wide signal pinned each model call's signal, and the SDK's controller with it, for the
 * life of the worker (the soak's heap snapshot of 2026-12-06: one AbortController kept per model
 * call). A plain controller is collected with the call once its listeners on the sources are gone.
 */
export function linkSignals(sources: readonly AbortSignal[]): LinkedSignal {
  const controller = new AbortController();
  const aborted = sources.find((source) => source.aborted);
  if (aborted !== undefined) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, dispose: () => undefined };
  }
  const onAbort = (event: Event): void => {
    dispose();
    controller.abort((event.target as AbortSignal).reason);
  };
  const dispose = (): void => {
    for (const source of sources) source.removeEventListener('abort', onAbort);
  };
  for (const source of sources) source.addEventListener('abort', onAbort);
  return { signal: controller.signal, dispose };
}
