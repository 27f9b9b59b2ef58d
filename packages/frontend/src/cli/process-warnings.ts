import type { Logger } from '@tritium/core';

/**
 * Prints Tritium's process warnings as the command's log lines, `[TRITIUM_W005] <message>`,
 * in place of Node's printer; other warnings (Node's own, a dependency's) stay with Node's
 * printer and its flags. Node's --no-warnings and --disable-warning=<code or type> (on the
 * command line or in NODE_OPTIONS) silence Tritium's warnings here as they would in Node's
 * printer.
 */
export function logProcessWarnings(logger: Logger): void {
  const nodePrinters = process.listeners('warning');
  // --no-warnings: Node installs no printer, and nothing is printed.
  if (nodePrinters.length === 0) return;
  const disabled = disabledWarnings([...(process.env.NODE_OPTIONS?.split(/\s+/) ?? []), ...process.execArgv]);
  process.removeAllListeners('warning');
  process.on('warning', (warning: Error & { code?: string }) => {
    const { name, code } = warning;
    if (name !== 'TritiumWarning' || !code) for (const print of nodePrinters) print(warning);
    else if (!disabled.has(name) && !disabled.has(code)) logger.warn(`[${code}] ${warning.message}`);
  });
}

/** The codes and types named by --disable-warning=X or --disable-warning X among Node's options. */
function disabledWarnings(options: readonly string[]): Set<string> {
  const disabled = new Set<string>();
  options.forEach((option, i) => {
    if (option.startsWith('--disable-warning=')) disabled.add(option.slice('--disable-warning='.length));
    else if (option === '--disable-warning' && options[i + 1]) disabled.add(options[i + 1]!);
  });
  return disabled;
}
