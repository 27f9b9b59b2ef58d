/**
 * Runs `body` while counting the event loop's turns (its check phases): for tests that
 * long work lets the loop turn. `turns` reads the count so far; the count at the end
 * comes back with the body's result.
 */
export async function countingTurns<T>(body: (turns: () => number) => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let counting = true;
  const tick = () => {
    turns++;
    if (counting) setImmediate(tick);
  };
  setImmediate(tick);
  try {
    const result = await body(() => turns);
    return { result, turns };
  } finally {
    counting = false;
  }
}
