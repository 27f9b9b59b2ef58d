import { USAGE_EXIT_CODE, UsageError } from './usage-error.js';

/** Where a subcommand writes: its report to `out`, progress and errors to `err`. */
export interface CommandStreams {
  readonly out: { write(text: string): unknown };
  readonly err: { write(text: string): unknown };
}

/**
 * A `tritium <name>` subcommand's frame: parses `argv` (undefined: --help, which prints
 * `usage()`), runs, and turns what is thrown into the exit status, 2 for a command line
 * that cannot run (a UsageError), 1 for a failed run, each said on `err` as
 * `tritium <name>: <why>`.
 */
export async function runSubcommand<Options>(
  name: string,
  argv: readonly string[],
  streams: CommandStreams,
  parse: (argv: readonly string[]) => Options | undefined,
  usage: () => string,
  run: (options: Options) => Promise<number>,
): Promise<number> {
  let options: Options | undefined;
  try {
    options = parse(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    streams.err.write(`tritium ${name}: ${error.message}\nRun 'tritium ${name} --help' for the options.\n`);
    return USAGE_EXIT_CODE;
  }
  if (!options) {
    streams.out.write(usage());
    return 0;
  }
  try {
    return await run(options);
  } catch (error) {
    streams.err.write(`tritium ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return error instanceof UsageError ? USAGE_EXIT_CODE : 1;
  }
}
