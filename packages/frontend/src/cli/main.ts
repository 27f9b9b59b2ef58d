import { pathToFileURL } from 'node:url';
import { ServerLogger, VERSION } from '@tritium/core';
import { parseCommandLine, type ServeOptions } from './arguments.js';
import { perfMain } from '../perf/perf-command.js';
import { analyzeMain } from '../analyze/analyze-command.js';
import { logProcessWarnings } from './process-warnings.js';
import { serve } from './serve.js';
import { shutDown, stopSignal } from './shutdown.js';
import { usage } from './usage.js';
import { USAGE_EXIT_CODE, UsageError } from './usage-error.js';

/** The `tritium` command: resolves with its exit status. */
export async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === 'perf') return perfMain(argv.slice(1));
  if (argv[0] === 'analyze') return analyzeMain(argv.slice(1));
  let command: ReturnType<typeof parseCommandLine>;
  try {
    command = parseCommandLine(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`tritium: ${error.message}\nRun 'tritium --help' for the flags.\n`);
    return USAGE_EXIT_CODE;
  }
  if (command.kind === 'help') process.stdout.write(usage());
  if (command.kind === 'version') process.stdout.write(`tritium ${VERSION}\n`);
  return command.kind === 'serve' ? run(command.options) : 0;
}

/** Serves until the first SIGTERM or SIGINT, then shuts down gracefully. */
async function run(options: ServeOptions): Promise<number> {
  // The server's log too (serve() hands it over): /v2/logging changes the command's lines as well.
  let logger: ServerLogger;
  try {
    logger = new ServerLogger({ settings: options.log });
  } catch (error) {
    process.stderr.write(`tritium: cannot open --log-file: ${(error as Error).message}\n`);
    return 1;
  }
  logProcessWarnings(logger);
  for (const { flag, why } of options.ignored) logger.warn(`${flag} is ignored by tritium: ${why}`);
  // Listening from the start: a signal during startup stops the server as soon as it is up.
  const stop = stopSignal(logger);
  let service: Awaited<ReturnType<typeof serve>>;
  try {
    service = await serve(options, logger);
  } catch (error) {
    logger.error(`failed to start: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  await stop;
  return (await shutDown(service, options.server.exitTimeoutMs, logger)) ? 0 : 1;
}

// Run as a program (node --import tsx src/cli/main.ts), not when imported (bin/tritium.mjs calls main()).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
