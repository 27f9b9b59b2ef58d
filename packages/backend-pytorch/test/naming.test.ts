import { describe, expect, it } from 'vitest';
import { bindInputs, outputPositions } from '../src/naming.js';

const tensors = (...names: string[]) => names.map((name) => ({ name, type: 'Tensor' }));

describe("Triton's tensor naming rules", () => {
  it("binds inputs by forward()'s argument names, then by <name>__<index>, then in order", () => {
    expect(bindInputs('m', ['y', 'x'], [], tensors('x', 'y'))).toEqual({ dict: false, positions: [1, 0] });
    expect(bindInputs('m', ['b__1', 'a__0'], [], tensors('x', 'y'))).toEqual({ dict: false, positions: [1, 0] });
    expect(bindInputs('m', ['b', 'a'], [], tensors('x', 'y'))).toEqual({ dict: false, positions: [0, 1] });
  });

  it('places sequence controls by their __<index>, and refuses one without it', () => {
    expect(bindInputs('m', ['INPUT__0'], ['START__2', 'END__1'], tensors('a', 'b', 'c'))).toEqual({ dict: false, positions: [0, 2, 1] });
    expect(() => bindInputs('m', ['INPUT__0'], ['START'], tensors('a', 'b'))).toThrow(/sequence control input 'START' does not follow the <name>__<index> naming convention/);
  });

  it('refuses two tensors on one argument, an index past the last, and a count that differs', () => {
    expect(() => bindInputs('m', ['INPUT__0'], ['START__0'], tensors('a', 'b'))).toThrow(/inputs 'INPUT__0' and 'START__0' are both forward\(\) argument 0/);
    expect(() => bindInputs('m', ['INPUT__0', 'INPUT__5'], [], tensors('a', 'b'))).toThrow(/input 'INPUT__5' is forward\(\) argument 5, but it takes 2/);
    expect(() => bindInputs('m', ['INPUT__0'], [], tensors('a', 'b'))).toThrow(/feeds forward\(\) 1 tensors but it takes 2 \(a, b\)/);
  });

  it('takes a single Dict[str, Tensor] argument as all inputs by name', () => {
    expect(bindInputs('m', ['a', 'b'], ['START'], [{ name: 'inputs', type: 'Dict[str, Tensor]' }])).toEqual({ dict: true });
  });

  it('finds outputs by <name>__<index>, else in config order', () => {
    expect(outputPositions(['OUTPUT__2', 'OUTPUT__0'])).toEqual([2, 0]);
    expect(outputPositions(['y', 'x'])).toEqual([0, 1]);
  });
});
