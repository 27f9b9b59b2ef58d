import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../src/cache/circuit-breaker.js';

function setup() {
  let time = 0;
  const events: string[] = [];
  const breaker = new CircuitBreaker(1000, { opened: (error) => events.push(`opened: ${error.message}`), closed: () => events.push('closed') }, () => time);
  return { breaker, events, advance: (ms: number) => (time += ms) };
}

describe('CircuitBreaker', () => {
  it('lets calls through until one fails, then none until the cool-down has passed', () => {
    const { breaker, events, advance } = setup();
    expect(breaker.admits()).toBe(true);
    breaker.succeeded();
    breaker.failed(new Error('Command timed out'));
    expect(events).toEqual(['opened: Command timed out']);
    advance(999);
    expect(breaker.admits()).toBe(false);
    advance(1);
    expect(breaker.admits()).toBe(true);
  });

  it('after the cool-down, lets one probe through at a time; its failure opens it again, quietly', () => {
    const { breaker, events, advance } = setup();
    breaker.failed(new Error('down'));
    advance(1000);
    expect(breaker.admits()).toBe(true);
    expect(breaker.admits()).toBe(false);
    breaker.failed(new Error('still down'));
    expect(breaker.admits()).toBe(false);
    advance(1000);
    expect(breaker.admits()).toBe(true);
    expect(events).toEqual(['opened: down']);
  });

  it('closes on an answer, and says so once', () => {
    const { breaker, events, advance } = setup();
    breaker.failed(new Error('down'));
    advance(1000);
    expect(breaker.admits()).toBe(true);
    breaker.succeeded();
    breaker.succeeded();
    expect(breaker.admits()).toBe(true);
    expect(breaker.admits()).toBe(true);
    expect(events).toEqual(['opened: down', 'closed']);
  });
});
