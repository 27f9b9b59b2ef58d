const watchers = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `callback` when `signal` aborts, with one 'abort' listener per signal however
 * many requests share it (a signal per user session, say), so a busy shared signal
 * neither trips Node's MaxListenersExceededWarning nor pays a listener per request.
 * Returns the function that stops watching.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let callbacks = watchers.get(signal);
  if (!callbacks) {
    const watching = new Set<() => void>();
    callbacks = watching;
    watchers.set(signal, watching);
    signal.addEventListener(
      'abort',
      () => {
        watchers.delete(signal);
        for (const watcher of watching) watcher();
      },
      { once: true },
    );
  }
  const set = callbacks;
  set.add(callback);
  return () => set.delete(callback);
}
