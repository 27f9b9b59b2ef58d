/** A command line that cannot run; the message names the flag or value at fault. The command exits with USAGE_EXIT_CODE. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The exit status for a command line that cannot run (as most Unix commands); 1 is for a server that failed. */
export const USAGE_EXIT_CODE = 2;
