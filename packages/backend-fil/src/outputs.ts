import type { Forest } from './forest.js';
import type { FilParameters } from './parameters.js';

/*
 * Triton FIL's output__0 from the forest's predictions: a regressor returns them as
 * they are; a classifier returns class probabilities with predict_proba (a binary
 * model's p becomes [1 - p, p]), else the class: p > threshold for binary, argmax
 * for multi-class.
 */

/** Values per row of output__0. */
export function outputWidth(forest: Forest, parameters: FilParameters): number {
  if (!parameters.isClassifier) return forest.numGroups;
  if (!parameters.predictProba) return 1;
  return forest.numGroups === 1 ? 2 : forest.numGroups;
}

export function shapeOutput(forest: Forest, parameters: FilParameters, predictions: Float64Array, rows: number): Float32Array {
  const groups = forest.numGroups;
  if (!parameters.isClassifier) return Float32Array.from(predictions);
  const out = new Float32Array(rows * outputWidth(forest, parameters));
  for (let r = 0; r < rows; r++) {
    if (groups === 1) {
      const p = predictions[r]!;
      if (parameters.predictProba) out.set([1 - p, p], r * 2);
      else out[r] = p > parameters.threshold ? 1 : 0;
    } else if (parameters.predictProba) {
      out.set(predictions.subarray(r * groups, (r + 1) * groups), r * groups);
    } else {
      out[r] = argmax(predictions, r * groups, groups);
    }
  }
  return out;
}

function argmax(values: Float64Array, start: number, n: number): number {
  let best = 0;
  for (let i = 1; i < n; i++) if (values[start + i]! > values[start + best]!) best = i;
  return best;
}
