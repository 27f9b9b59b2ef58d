/**
 * Runs `load`, and while it fails runs it again up to `retries` more times, at once, as
 * Triton's --model-load-retry-count retries a version's load. Rejects with the last failure.
 */
export async function withLoadRetries<T>(retries: number, load: () => Promise<T>, onFailedAttempt: (error: unknown, attempt: number) => void): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await load();
    } catch (error) {
      if (attempt > retries) throw error;
      onFailedAttempt(error, attempt);
    }
  }
}
