import { describe, expect, it } from 'vitest';
import { elementCount, isValidShape, shapeMatches, shapeToString } from '../../src/tensor/index.js';

describe('shape', () => {
  it('counts elements', () => {
    expect(elementCount([])).toBe(1);
    expect(elementCount([4, 4])).toBe(16);
    expect(elementCount([3, 0, 2])).toBe(0);
  });

  it('prints shapes', () => {
    expect(shapeToString([4, 4])).toBe('[4,4]');
    expect(shapeToString([])).toBe('[]');
  });

  it('validates shapes', () => {
    expect(isValidShape([])).toBe(true);
    expect(isValidShape([0, 1, 7])).toBe(true);
    for (const bad of [[-1], [1.5], [NaN], [Infinity], ['2'], [1n], null, undefined, 3, '[1]']) {
      expect(isValidShape(bad)).toBe(false);
    }
  });

  it('matches dims with -1 wildcards', () => {
    expect(shapeMatches([2, 3], [2, 3])).toBe(true);
    expect(shapeMatches([2, 3], [-1, 3])).toBe(true);
    expect(shapeMatches([2, 3], [-1, -1])).toBe(true);
    expect(shapeMatches([2, 3], [2, 4])).toBe(false);
    expect(shapeMatches([2, 3], [2])).toBe(false);
    expect(shapeMatches([2], [2, -1])).toBe(false);
    expect(shapeMatches([], [])).toBe(true);
  });
});
