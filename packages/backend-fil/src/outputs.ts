import type { Forest } from './forest.js';
import type { FilParameters } from './parameters.js';

/*
 * Triton FIL's output__0 from the forest's predictions: a regressor returns them as
 * they are; a classifier returns class probabilities with predict_proba, else the
 * class: p > threshold for binary, argmax for multi-class. A binary model's
 * probabilities are [1 - p, p] (FIL's QA configs: dims [2]), or p alone where the
 * config's output has dims [1] (FIL's docs: "a single class"). A model whose objective
 * predicts the class (XGBoost's multi:softmax) gives the class as a classifier does,
 * whatever is_classifier says, as XGBoost's own predict() does.
 */

/** Whether output__0 is the class or class probabilities rather than the raw predictions. */
export function classifies(forest: Forest, parameters: FilParameters): boolean {
  return parameters.isClassifier || forest.predictsClass;
}

/** Values per row of output__0, given the last dimension the config declares (-1: any). */
export function outputWidth(forest: Forest, parameters: FilParameters, declared: number): number {
  if (!classifies(forest, parameters)) return forest.numGroups;
  if (!parameters.predictProba) return 1;
  if (forest.numGroups > 1) return forest.numGroups;
  return declared === 1 ? 1 : 2;
}

export function shapeOutput(forest: Forest, parameters: FilParameters, width: number, predictions: Float64Array, rows: number): Float32Array {
  const groups = forest.numGroups;
  if (!classifies(forest, parameters) || (parameters.predictProba && width === groups)) return Float32Array.from(predictions);
  const out = new Float32Array(rows * width);
  if (groups > 1) {
    for (let r = 0; r < rows; r++) out[r] = argmax(predictions, r * groups, groups);
  } else if (parameters.predictProba) {
    for (let r = 0; r < rows; r++) {
      out[2 * r] = 1 - predictions[r]!;
      out[2 * r + 1] = predictions[r]!;
    }
  } else {
    for (let r = 0; r < rows; r++) out[r] = predictions[r]! > parameters.threshold ? 1 : 0;
  }
  return out;
}

function argmax(values: Float64Array, start: number, n: number): number {
  let best = 0;
  for (let i = 1; i < n; i++) if (values[start + i]! > values[start + best]!) best = i;
  return best;
}
