/** One position's log probabilities as vLLM gives them: by token id, each with its rank and text. */
type PositionLogprobs = Record<string, { logprob: number; rank: number; decoded_token: string }>;

/**
 * The log probabilities of the generated tokens, for the `logprobs` and `cumulative_logprob`
 * outputs in the shape of Triton's vLLM backend: per position the sampled token and the
 * `top` most likely ones; each response carries the positions since the previous one.
 * The probabilities are the model's (node-llama-cpp's, before temperature).
 */
export class TokenLogprobs {
  private positions: PositionLogprobs[] = [];
  private total = 0;

  constructor(
    /** How many top tokens per position (vLLM's `logprobs`); undefined: only the cumulative figure is kept. */
    private readonly top: number | undefined,
    /** A decoder of candidates at the position being added: made once per position (the tokens before are the same for all). */
    private readonly decoderHere: () => (token: number) => string,
  ) {}

  add(token: number, confidence: number | undefined, probabilities: ReadonlyMap<number, number> | undefined): void {
    this.total += Math.log(confidence ?? 0);
    if (this.top === undefined || !probabilities) return;
    const position: PositionLogprobs = {};
    const decode = this.decoderHere();
    let rank = 0;
    for (const [candidate, probability] of probabilities) {
      rank++;
      // The map is sorted, most likely first.
      if (rank <= this.top || candidate === token) position[candidate] = { logprob: Math.log(probability), rank, decoded_token: decode(candidate) };
      if (rank >= this.top && position[token]) break;
    }
    this.positions.push(position);
  }

  /** The sum of the sampled tokens' log probabilities so far. */
  get cumulative(): number {
    return this.total;
  }

  /** The positions added since the last call, as JSON; "null" when none were asked for (as vLLM's). */
  takeJson(): string {
    if (this.top === undefined) return 'null';
    const json = JSON.stringify(this.positions);
    this.positions = [];
    return json;
  }
}
