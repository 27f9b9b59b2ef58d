import type { Logger } from './contract/logger.js';

/** The default logger: errors, warnings and information to the console; verbose messages dropped, as Triton logs without --log-verbose. */
export const consoleLogger: Logger = {
  error: (message) => console.error(message),
  warn: (message) => console.warn(message),
  info: (message) => console.info(message),
  verbose: () => {},
};
