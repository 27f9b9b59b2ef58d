import type { InferenceError } from '../errors.js';
import type { Tensor } from '../tensor/tensor.js';
import { Fifo } from './fifo.js';
import type { ResponseSink } from './response-channel.js';

/**
 * `preserve_ordering`: responses reach callers in the order their requests arrived.
 * The oldest unfinished request's responses go straight through; a later request's
 * are held until every earlier one has finished. A failure (a cancellation, an
 * expired timeout) is answered at once and leaves the order, so an abort is never
 * held up behind slower requests.
 */
export class ResponseOrder {
  private readonly waiting = new Fifo<OrderedSink>();

  wrap(sink: ResponseSink): ResponseSink {
    const ordered = new OrderedSink(sink, this);
    this.waiting.push(ordered);
    return ordered;
  }

  isFirst(sink: OrderedSink): boolean {
    return this.waiting.peek() === sink;
  }

  /** A request finished or left: releases whatever is now first in line. */
  advance(): void {
    for (let first = this.waiting.peek(); first && first.release(); first = this.waiting.peek()) this.waiting.shift();
  }
}

class OrderedSink implements ResponseSink {
  private held: [outputs: Record<string, Tensor>, final: boolean][] = [];
  private ended = false;
  private failed = false;

  constructor(
    private readonly sink: ResponseSink,
    private readonly order: ResponseOrder,
  ) {}

  response(outputs: Record<string, Tensor>, final: boolean): void {
    if (this.order.isFirst(this)) this.sink.response(outputs, final);
    else this.held.push([outputs, final]);
  }

  end(): void {
    this.ended = true;
    if (this.order.isFirst(this)) this.order.advance();
  }

  error(error: InferenceError): void {
    this.failed = true;
    this.held = [];
    this.sink.error(error);
    if (this.order.isFirst(this)) this.order.advance();
  }

  /** Now first in line: passes on what it holds; true when it has finished (and leaves the line). */
  release(): boolean {
    if (this.failed) return true;
    for (const [outputs, final] of this.held) this.sink.response(outputs, final);
    this.held = [];
    if (this.ended) this.sink.end();
    return this.ended;
  }
}
