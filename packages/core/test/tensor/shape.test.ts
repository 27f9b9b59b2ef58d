import { describe, expect, it } from 'vitest';
import { elementCount, isValidShape, mapVariableDims, shapeMatches, shapeToString } from '../../src/tensor/index.js';

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
    expect(isValidShape([0, 1, 7, 2 ** 31 - 1])).toBe(true);
    for (const bad of [[-1], [2 ** 31], [1.5], [NaN], [Infinity], ['2'], [1n], null, undefined, 3, '[1]']) {
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

describe('mapVariableDims', () => {
  it('gives the target\'s variable dims the sizes of the source\'s, in order', () => {
    expect(mapVariableDims([3, 4, 5], [-1, 4, -1], [-1, 2, 2, -1])).toEqual([3, 2, 2, 5]);
    expect(mapVariableDims([4, 4], [4, 4], [16])).toEqual([16]);
    expect(mapVariableDims([7], [-1], [1, -1])).toEqual([1, 7]);
  });
});
