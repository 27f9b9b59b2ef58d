/** What runBounded gives back: each item's value (undefined where its task did not run or failed) and the first failure. */
export interface BoundedRun<T> {
  readonly values: ReadonlyArray<T | undefined>;
  readonly failure?: { readonly reason: unknown };
}

/**
 * Runs `task` on each item, at most `limit` at once, in order. After a task fails no
 * further task starts, but those running are waited for: a caller then has every
 * value to clean up, and nothing still running behind its back.
 */
export async function runBounded<I, T>(items: readonly I[], limit: number, task: (item: I, index: number) => Promise<T>): Promise<BoundedRun<T>> {
  const values: Array<T | undefined> = new Array(items.length).fill(undefined);
  let failure: { reason: unknown } | undefined;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && !failure) {
      const index = next++;
      try {
        values[index] = await task(items[index]!, index);
      } catch (reason) {
        failure ??= { reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return failure ? { values, failure } : { values };
}
