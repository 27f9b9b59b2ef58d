import type { Logger } from '@tritium/core';

/** A Logger keeping each message after its level's letter (`E`, `W`, `I`, `V`). */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, error: (m) => lines.push(`E ${m}`), warn: (m) => lines.push(`W ${m}`), info: (m) => lines.push(`I ${m}`), verbose: (m) => lines.push(`V ${m}`) };
}
