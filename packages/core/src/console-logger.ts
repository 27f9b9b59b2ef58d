import type { Logger } from './contract/logger.js';

/** The default logger's destination: the console. What shows is for the server's log settings to say (ServerLogger), verbose messages only once a level is set. */
export const consoleLogger: Logger = {
  error: (message) => console.error(message),
  warn: (message) => console.warn(message),
  info: (message) => console.info(message),
  verbose: (message) => console.debug(message),
};
