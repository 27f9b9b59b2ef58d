// Regenerates the KServe schemas here from a kserve checkout (Apache-2.0, github.com/kserve/kserve):
//   node deploy/test/schemas/vendor-kserve.mjs <kserve checkout> <commit it is at>
// Each is the openAPIV3Schema of the served version of a CRD in config/crd/full/, without its
// descriptions. The InferenceService schema keeps `spec.predictor` with the fields a Triton-format
// deployment uses (the `model` spec and the pod fields) and drops, to stay small, the other
// framework specs (sklearn, xgboost, ...), `predictor.workerSpec`, `explainer` and `transformer`:
// a manifest that uses one of them fails validation as an unknown field, saying so.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const [checkout, commit] = process.argv.slice(2);
if (!checkout || !commit) throw new Error('usage: vendor-kserve.mjs <kserve checkout> <commit>');

const strip = (node) =>
  Array.isArray(node)
    ? node.map(strip)
    : node && typeof node === 'object'
      ? Object.fromEntries(Object.entries(node).filter(([key]) => key !== 'description').map(([key, value]) => [key, strip(value)]))
      : node;

const PREDICTOR_DROPPED = ['sklearn', 'xgboost', 'tensorflow', 'pytorch', 'triton', 'onnx', 'pmml', 'lightgbm', 'paddle', 'huggingface', 'workerSpec'];

for (const [plural, prune] of [
  ['servingruntimes', () => {}],
  [
    'inferenceservices',
    (schema) => {
      const spec = schema.properties.spec.properties;
      delete spec.explainer;
      delete spec.transformer;
      for (const key of PREDICTOR_DROPPED) delete spec.predictor.properties[key];
    },
  ],
]) {
  const crd = parse(readFileSync(join(checkout, `config/crd/full/serving.kserve.io_${plural}.yaml`), 'utf8'));
  const version = crd.spec.versions.find((v) => v.served && v.storage);
  const schema = strip(version.schema.openAPIV3Schema);
  prune(schema);
  const out = {
    source: `https://github.com/kserve/kserve/blob/${commit}/config/crd/full/serving.kserve.io_${plural}.yaml`,
    license: 'Apache-2.0',
    group: crd.spec.group,
    kind: crd.spec.names.kind,
    version: version.name,
    ...(plural === 'inferenceservices' ? { pruned: { 'spec.predictor': PREDICTOR_DROPPED, spec: ['explainer', 'transformer'] } } : {}),
    schema,
  };
  writeFileSync(new URL(`./${crd.spec.names.kind}.json`, import.meta.url), `${JSON.stringify(out)}\n`);
}
