/** The version numbers among a model directory's entry names, ascending: canonical numbers only, so "01" and "1" cannot both be version 1. */
export function versionNumbers(names: Iterable<string>): number[] {
  return [...new Set(names)]
    .filter((name) => /^(0|[1-9][0-9]*)$/.test(name))
    .map(Number)
    .filter(Number.isSafeInteger)
    .sort((a, b) => a - b);
}
