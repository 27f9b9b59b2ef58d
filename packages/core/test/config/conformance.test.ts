import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_INSTANCES_PER_MODEL,
  ModelConfigSchema,
  normalizeModelConfig,
  parseModelConfig,
  printModelConfig,
  validateModelConfig,
  type ModelConfig,
} from '../../src/config/index.js';
import type { Backend, ModelContext } from '../../src/contract/backend.js';
import { modelInstances } from '../../src/model/model-instances.js';
import { fuzzParser, invalidArgMessage } from './helpers.js';

/*
 * Real Triton configurations from ../shared/conformance (see its README): every .pbtxt
 * must parse and round-trip, every config Triton refuses must be refused for the same
 * fault, and normalization must arrive at Triton's generic defaults.
 */

const ROOT = fileURLToPath(new URL('../../../../../shared/conformance/triton-server', import.meta.url));
const MODEL_CONFIG = join(ROOT, 'qa/L0_model_config');
const present = existsSync(ROOT);
if (!present) console.log(`conformance corpus not found at ${ROOT}: skipping the conformance tests`);

const ONE_GPU_BACKEND: Backend = { name: 'onnxruntime', gpuCount: () => 1, createModel: () => Promise.reject(new Error('not loaded here')) };

function filesUnder(directory: string, keep: (name: string) => boolean): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    return entry.isDirectory() ? filesUnder(path, keep) : keep(entry.name) ? [path] : [];
  });
}

const read = (path: string) => readFileSync(path, 'utf8');
const expectations = (directory: string) =>
  readdirSync(directory)
    .filter((name) => name.startsWith('expected'))
    .map((name) => read(join(directory, name)).trim());

/**
 * What our message must mention of Triton's: quoted names, enum-like identifiers,
 * instance group names, GPU ids and priority ranges (the wording itself is ours).
 */
function keywords(expected: string): string[] {
  const text = expected.replace(/\\(.)/g, '$1'); // the expected fragments are grep patterns
  const words = new Set<string>();
  for (const [, quoted] of text.matchAll(/'([^']+)'/g)) words.add(quoted!);
  for (const [identifier] of text.matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g)) words.add(identifier);
  for (const [, group] of text.matchAll(/instance group (\S+_\d+)/g)) words.add(group!);
  for (const [, id] of text.matchAll(/gpu id (-?\d+)/g)) words.add(`gpu id ${id}`);
  for (const [range] of text.matchAll(/\[\d+, \d+\]/g)) words.add(range);
  return [...words];
}

/** The config field each family of cases is about; our message must name it too. */
const FIELD_OF_CASE: readonly [RegExp, string][] = [
  [/^batch_input/, 'batch_input'],
  [/^batch_output/, 'batch_output'],
  [/^control_/, 'control'],
  [/priority_level/, 'priority'],
  [/^ensemble_scheduling/, 'ensemble_scheduling'],
  [/^(invalid|negative)_(cpu|gpu)$/, 'instance group'],
  [/^missing_datatype$/, 'data_type'],
  [/^negative_max_batch_size$/, 'max_batch_size'],
  [/^preserve_ordering/, 'preserve_ordering'],
  [/^reshape/, 'reshape'],
  [/^zerodims/, 'dims'],
];

function mentionsAll(message: string, words: readonly string[]): boolean {
  return words.every((word) => message.includes(word));
}

describe.skipIf(!present)('conformance: Triton configurations', () => {
  const pbtxtFiles = present ? filesUnder(ROOT, (name) => name.endsWith('.pbtxt')) : [];

  it('parses every .pbtxt and prints each back to the same object', () => {
    let parsed = 0;
    const failures: string[] = [];
    for (const file of pbtxtFiles) {
      const source = relative(ROOT, file);
      try {
        const config = parseModelConfig(read(file), source);
        expect(parseModelConfig(printModelConfig(config), `printed ${source}`)).toEqual(config);
        parsed++;
      } catch (error) {
        failures.push(`${source}: ${String(error)}`);
      }
    }
    console.log(`conformance: parsed ${parsed} of ${pbtxtFiles.length} .pbtxt files (each round-tripped through the printer)`);
    expect(failures).toEqual([]);
    expect(pbtxtFiles.length).toBeGreaterThan(400);
  });

  it('never throws anything but a positioned InferenceError on mutated real configs', () => {
    const { runs, refused } = fuzzParser(pbtxtFiles.map(read), { seed: 7, maxRuns: 3_000, millis: 3_000 });
    console.log(`conformance: fuzzed the parser with ${runs} mutated real configs (${refused} refused, all with a position)`);
    expect(runs).toBeGreaterThan(1_000);
  });

  it('refuses every noautofill_platform case for the fault Triton names', () => {
    const directory = join(MODEL_CONFIG, 'noautofill_platform');
    const cases = readdirSync(directory).filter((name) => existsSync(join(directory, name, 'config.pbtxt')));
    const failures: string[] = [];
    let refused = 0;
    for (const name of cases) {
      // As Triton's QA script does: drop any platform line and set the platform under test.
      const text = read(join(directory, name, 'config.pbtxt'))
        .split('\n')
        .filter((line) => !/^\s*platform\s*:/.test(line))
        .join('\n');
      const message = invalidArgMessage(() => {
        const config = validateModelConfig(parseModelConfig(`${text}\nplatform: "onnxruntime_onnx"\n`, name));
        // Triton's QA ran on a machine with a GPU: an id past it is refused when instances are placed.
        modelInstances(ONE_GPU_BACKEND, { name, config } as ModelContext, DEFAULT_MAX_INSTANCES_PER_MODEL);
      });
      const field = FIELD_OF_CASE.find(([pattern]) => pattern.test(name))?.[1];
      const words = [...keywords(read(join(directory, name, 'expected'))), name, ...(field ? [field] : [])];
      if (field && mentionsAll(message, words)) refused++;
      else failures.push(`${name}: "${message}" should mention ${words.join(', ')}${field ? '' : ' (and the case needs a FIELD_OF_CASE entry)'}`);
    }
    console.log(`conformance: refused ${refused} of ${cases.length} noautofill_platform cases, each for the fault Triton names`);
    expect(failures).toEqual([]);
    expect(cases.length).toBeGreaterThan(50);
  });

  it('refuses the single-model ensemble cases of autofill_noplatform for the fault Triton names', () => {
    const directory = join(MODEL_CONFIG, 'autofill_noplatform/ensemble');
    const cases = readdirSync(directory).filter((name) => existsSync(join(directory, name, 'config.pbtxt')));
    const failures: string[] = [];
    for (const name of cases) {
      const message = invalidArgMessage(() => validateModelConfig(parseModelConfig(read(join(directory, name, 'config.pbtxt')), name)));
      const alternatives = expectations(join(directory, name)).map((expected) => [...keywords(expected), 'ensemble']);
      if (!alternatives.some((words) => mentionsAll(message, words))) {
        failures.push(`${name}: "${message}" should mention ${alternatives.map((words) => words.join(', ')).join(' or ')}`);
      }
    }
    console.log(`conformance: refused ${cases.length - failures.length} of ${cases.length} single-model ensemble cases`);
    expect(failures).toEqual([]);
    expect(cases.length).toBeGreaterThan(10);
  });

  it("normalizes to Triton's generic defaults (autofill_noplatform_success)", () => {
    const expectedFiles = filesUnder(join(MODEL_CONFIG, 'autofill_noplatform_success'), (name) => name === 'expected');
    let compared = 0;
    for (const expectedFile of expectedFiles) {
      const directory = dirname(expectedFile);
      const configFile = join(directory, 'config.pbtxt');
      const written = existsSync(configFile) ? parseModelConfig(read(configFile), configFile) : {};
      // The repository names a model after its directory when the config does not.
      const ours = normalizeModelConfig({ ...written, name: written.name || basename(directory) });
      const theirs = ModelConfigSchema.parse(parseModelConfig(read(expectedFile), expectedFile));
      const where = relative(MODEL_CONFIG, directory);
      expect(ours.version_policy, where).toEqual(theirs.version_policy);
      expect(ours.ensemble_scheduling !== undefined, where).toBe(theirs.ensemble_scheduling !== undefined);
      if (ours.ensemble_scheduling) {
        expect([ours.instance_group, ours.optimization, ours.model_transaction_policy], where).toEqual([theirs.instance_group, theirs.optimization, theirs.model_transaction_policy]);
      } else {
        const pinned = (config: ModelConfig) => [config.optimization?.input_pinned_memory, config.optimization?.output_pinned_memory];
        expect(pinned(ours), where).toEqual(pinned(theirs));
        expect(ours.instance_group.map((group) => group.name), where).toEqual(theirs.instance_group.map((group) => group.name));
        // Triton had a GPU; counts compare where both sides are on the CPU with the same backend.
        theirs.instance_group.forEach((group, i) => {
          if (group.kind === 'KIND_CPU' && ours.backend === theirs.backend) expect(ours.instance_group[i]?.count, where).toBe(group.count);
        });
      }
      // Backend fields that need no model file to decide.
      if (ours.backend) expect([ours.backend, ours.platform, ours.default_model_filename], where).toEqual([theirs.backend, theirs.platform, theirs.default_model_filename]);
      if (written.dynamic_batching && written.max_batch_size) expect(ours.dynamic_batching, where).toEqual(theirs.dynamic_batching);
      if (written.model_transaction_policy) expect(ours.model_transaction_policy, where).toEqual(theirs.model_transaction_policy);
      compared++;
    }
    console.log(`conformance: compared generic defaults with Triton's for ${compared} autofill_noplatform_success models`);
    expect(compared).toBeGreaterThan(20);
  });
});
