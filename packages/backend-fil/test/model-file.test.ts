import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { modelFilePath } from '../src/model-file.js';

// A config (perhaps a client's load override) picks the file name: it must stay in the version directory.
describe('modelFilePath', () => {
  let root: string;
  let version: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'tritium-fil-file-'));
    version = join(root, 'm', '1');
    await mkdir(version, { recursive: true });
    await writeFile(join(root, 'secret.json'), '{"secret": true}');
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("takes the config's name, else FIL's name for the model type", async () => {
    expect(await modelFilePath(version, 'xgboost_json', '', 'm')).toBe(join(version, 'xgboost.json'));
    expect(await modelFilePath(version, 'xgboost_json', 'trees/forest.json', 'm')).toBe(join(version, 'trees', 'forest.json'));
  });

  it("refuses '..', an absolute path, and a model file linked from outside", async () => {
    await symlink(join(root, 'secret.json'), join(version, 'xgboost.json'));
    await expect(modelFilePath(version, 'xgboost_json', '../../secret.json', 'm')).rejects.toMatchObject({ code: 'INVALID_ARG', message: expect.stringMatching(/^model 'm': default_model_filename '\.\.\/\.\.\/secret\.json' must name a file inside/) });
    await expect(modelFilePath(version, 'xgboost_json', join(root, 'secret.json'), 'm')).rejects.toMatchObject({ code: 'INVALID_ARG', message: expect.stringMatching(/absolute path/) });
    await expect(modelFilePath(version, 'xgboost_json', '', 'm')).rejects.toMatchObject({ code: 'INVALID_ARG', message: expect.stringMatching(/default_model_filename 'xgboost.json' .*symbolic link/) });
  });
});
