/** Turns tokens into text: `tokens`, with `before` as the tokens that precede them (for the leading space). */
export type Detokenize = (tokens: readonly number[], before: readonly number[]) => string;

const CONTEXT_TOKENS = 16;

/**
 * A generation's text as its tokens arrive: whole characters only (a token that ends
 * inside a UTF-8 sequence waits for the next), cut at the first stop string, and
 * releasing to the caller only what no stop string can still claim.
 */
export class OutputText {
  private text = '';
  private released = 0;
  private readonly tokens: number[] = [];
  /** tokens[decodedTokens..] are not in `text` yet (they end inside a character). */
  private decodedTokens = 0;
  private stopAt: number | undefined;
  private readonly longestStop: number;

  constructor(
    private readonly detokenize: Detokenize,
    private readonly prompt: readonly number[],
    private readonly stop: readonly string[],
    private readonly includeStop: boolean,
  ) {
    this.longestStop = Math.max(0, ...stop.map((s) => s.length));
  }

  /** Adds a token; true when the text now holds a stop string (the generation ends). */
  push(token: number): boolean {
    this.tokens.push(token);
    this.decodePending(false);
    return this.stopAt !== undefined;
  }

  /** Appends the tokens not decoded yet to the text, unless they end inside a character and `partial` is false. */
  private decodePending(partial: boolean): void {
    if (this.decodedTokens === this.tokens.length || this.stopAt !== undefined) return;
    const pending = this.tokens.slice(this.decodedTokens);
    // The few tokens before are enough to decide a leading space.
    const context = this.decodedTokens > 0 ? this.tokens.slice(Math.max(0, this.decodedTokens - CONTEXT_TOKENS), this.decodedTokens) : this.prompt.slice(-CONTEXT_TOKENS);
    const piece = this.detokenize(pending, context);
    if (!partial && piece.endsWith('\uFFFD')) return;
    const searchFrom = Math.max(0, this.text.length - this.longestStop + 1);
    this.text += piece;
    this.decodedTokens = this.tokens.length;
    this.stopAt = this.findStop(searchFrom);
  }

  get tokenCount(): number {
    return this.tokens.length;
  }

  outputTokens(): readonly number[] {
    return this.tokens;
  }

  /** The text not released yet that is final: all of it once `end` (or a stop string), else up to where a stop string could begin. */
  take(end: boolean): string {
    // At the end, bytes that never made a whole character are given as U+FFFD.
    if (end) this.decodePending(true);
    const limit = this.stopAt ?? (end ? this.text.length : this.text.length - this.heldBack());
    const part = this.text.slice(this.released, Math.max(this.released, limit));
    this.released = Math.max(this.released, limit);
    return part;
  }

  /** Where the text ends at the earliest stop string (after it when it is kept), or undefined. */
  private findStop(from: number): number | undefined {
    let earliest: { at: number; length: number } | undefined;
    for (const stop of this.stop) {
      const at = this.text.indexOf(stop, from);
      if (at >= 0 && (earliest === undefined || at < earliest.at)) earliest = { at, length: stop.length };
    }
    if (!earliest) return undefined;
    return this.includeStop ? earliest.at + earliest.length : earliest.at;
  }

  /** Length of the text's longest suffix that starts a stop string. */
  private heldBack(): number {
    for (let length = Math.min(this.longestStop - 1, this.text.length); length > 0; length--) {
      const tail = this.text.slice(this.text.length - length);
      if (this.stop.some((stop) => stop.startsWith(tail))) return length;
    }
    return 0;
  }
}
