import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InferenceServer, type RepositoryAgent, type RepositoryAgentAction } from '@tritium/core';
import { testConfig } from '../helpers/repository.js';
import { useServerFixture } from '../helpers/server-fixture.js';

const fixture = useServerFixture();
const { start } = fixture;

const md5 = (text: string) => createHash('md5').update(text).digest('hex');
const agents = (...entries: string[]) => `model_repository_agents { agents [ ${entries.join(', ')} ] }`;
const checksum = (parameters: Record<string, string>) =>
  `{ name: "checksum", parameters [ ${Object.entries(parameters).map(([key, value]) => `{ key: "${key}" value: "${value}" }`).join(', ')} ] }`;
const withAgents = (block: string) => testConfig({ extra: block });

async function reason(name: string): Promise<string | undefined> {
  return (await fixture.server!.repositoryIndex()).find((entry) => entry.name === name)?.reason;
}

describe('the checksum agent', () => {
  it('loads a model whose files have the MD5 digests its config gives, a model file and a data file', async () => {
    // The digest of nothing is MD5's published test vector.
    expect(md5('')).toBe('d41d8cd98f00b204e9800998ecf8427e');
    const content = JSON.stringify({ note: 'weights' });
    await start({ m: { config: withAgents(agents(checksum({ 'MD5:1/model.test': md5(content), 'md5:1/empty.bin': 'd41d8cd98f00b204e9800998ecf8427e' }))), versions: { 1: content } } }, {
      modelControlMode: 'explicit',
    });
    await writeFile(join(fixture.repo!.path, 'm', '1', 'empty.bin'), '');
    await fixture.server!.loadModel('m');
    expect(await fixture.server!.isModelReady('m')).toBe(true);
  });

  it("refuses to load a model whose file's digest differs, naming the file, with Triton's text", async () => {
    const content = JSON.stringify({ note: 'tampered' });
    const expected = md5('the original');
    await start({ m: { config: withAgents(agents(checksum({ 'MD5:1/model.test': expected }))), versions: { 1: content } }, ok: { config: testConfig({}) } });
    expect(await reason('m')).toBe(`Mismatched MD5 hash for file 1/model.test, expect: ${expected}, got: ${md5(content)}`);
    expect(await fixture.server!.isModelReady('m')).toBe(false);
    expect(await fixture.server!.isModelReady('ok')).toBe(true);
  });

  it('refuses a missing file, a key without an algorithm, an algorithm other than MD5 and a file outside the model directory', async () => {
    await start({
      missing: { config: withAgents(agents(checksum({ 'MD5:1/nothing.bin': md5('') }))) },
      unparsed: { config: withAgents(agents(checksum({ '1/model.test': md5('') }))) },
      sha: { config: withAgents(agents(checksum({ 'SHA256:1/model.test': md5('') }))) },
      outside: { config: withAgents(agents(checksum({ 'MD5:../ok/config.pbtxt': md5('') }))) },
      ok: { config: testConfig({}) },
    });
    expect(await reason('missing')).toMatch(/^failed to open text file for read 1\/nothing.bin: ENOENT/);
    expect(await reason('unparsed')).toBe('failed to parse key: 1/model.test');
    expect(await reason('sha')).toBe('Unsupported checksum algorithm: SHA256');
    expect(await reason('outside')).toMatch(/^checksum agent: file '..\/ok\/config.pbtxt' must name a file inside/);
  });

  it('checks the files of an explicit load with a config override, and fails it as a poll failure', async () => {
    const content = JSON.stringify({});
    await start({ m: { versions: { 1: content } } }, { modelControlMode: 'explicit' });
    await expect(fixture.server!.loadModel('m', { config: withAgents(agents(checksum({ 'MD5:1/model.test': md5('other') }))) })).rejects.toMatchObject({
      code: 'INTERNAL',
      message: `failed to load 'm', failed to poll from model repository: Mismatched MD5 hash for file 1/model.test, expect: ${md5('other')}, got: ${md5(content)}`,
    });
    await fixture.server!.loadModel('m', { config: withAgents(agents(checksum({ 'MD5:1/model.test': md5(content) }))) });
    expect(await fixture.server!.isModelReady('m')).toBe(true);
  });
});

describe('repository agents', () => {
  it('refuses at load an agent the server does not have, naming it', async () => {
    await start({ m: { config: withAgents(agents('{ name: "encryption" }')) } });
    expect(await reason('m')).toBe("unable to find repository agent 'encryption': the server has 'checksum' (ServerOptions.repositoryAgents adds others)");
  });

  it('tells an agent each action in order, with its parameters and its state for that load, across a load, a reload and an unload', async () => {
    const heard: string[] = [];
    let loads = 0;
    const recorder: RepositoryAgent = {
      name: 'recorder',
      modelAction(model, action) {
        if (action === 'load') model.state = ++loads;
        heard.push(`${model.name} load ${String(model.state)}: ${action} ${model.parameters.tag}`);
      },
    };
    await start({ m: { config: withAgents(agents('{ name: "recorder" parameters { key: "tag" value: "t1" } }')) } }, { modelControlMode: 'explicit', startupModels: ['m'], repositoryAgents: [recorder] });
    expect(heard).toEqual(['m load 1: load t1', 'm load 1: load_complete t1']);
    await fixture.server!.loadModel('m');
    await fixture.server!.unloadModel('m');
    await settle(() => heard.length === 8);
    // Each load's versions retire in the background: the two loads' unload actions may interleave.
    const ofLoad = (n: number) => heard.filter((line) => line.startsWith(`m load ${n}:`)).map((line) => line.split(': ')[1]);
    expect(ofLoad(1)).toEqual(['load t1', 'load_complete t1', 'unload t1', 'unload_complete t1']);
    expect(ofLoad(2)).toEqual(['load t1', 'load_complete t1', 'unload t1', 'unload_complete t1']);
    expect(heard.indexOf('m load 2: load_complete t1')).toBeLessThan(heard.indexOf('m load 1: unload t1'));
  });

  it('tells the agents that ran load_fail, in order, when a version fails to load', async () => {
    const heard: RepositoryAgentAction[] = [];
    const recorder: RepositoryAgent = { name: 'recorder', modelAction: (_model, action) => void heard.push(action) };
    await start({ m: { config: withAgents(agents('{ name: "recorder" }')), versions: { 1: JSON.stringify({ fail: 'broken weights' }) } } }, { repositoryAgents: [recorder] });
    expect(heard).toEqual(['load', 'load_fail']);
    expect(await reason('m')).toMatch(/broken weights/);
  });

  it('stops at the first agent that fails: the model does not load, and the agents that ran hear load_fail', async () => {
    const heard: string[] = [];
    const recorder: RepositoryAgent = { name: 'recorder', modelAction: (_model, action) => void heard.push(action) };
    const refuser: RepositoryAgent = {
      name: 'refuser',
      modelAction(_model, action) {
        heard.push(`refuser ${action}`);
        if (action === 'load') throw new Error('not signed');
      },
    };
    await start({ m: { config: withAgents(agents('{ name: "recorder" }', '{ name: "refuser" }', '{ name: "never" }')) } }, { repositoryAgents: [recorder, refuser] });
    expect(await reason('m')).toBe('not signed');
    expect(heard).toEqual(['load', 'refuser load', 'load_fail', 'refuser load_fail']);
  });

  it('loads the model from the location an agent sets, and removes the directory it acquired once the model unloads', async () => {
    let acquired = '';
    // Stands for a decrypting agent: the repository's file cannot load, the agent's copy can.
    const decrypter: RepositoryAgent = {
      name: 'decrypter',
      async modelAction(model, action) {
        if (action !== 'load') return;
        acquired = await model.acquireMutableLocation();
        await cp(model.location, acquired, { recursive: true });
        await writeFile(join(acquired, '1', 'model.test'), JSON.stringify({}));
        model.setLocation(acquired);
      },
    };
    await start({ m: { config: withAgents(agents('{ name: "decrypter" }')), versions: { 1: JSON.stringify({ fail: 'still encrypted' }) } } }, { modelControlMode: 'explicit', startupModels: ['m'], repositoryAgents: [decrypter] });
    expect(await fixture.server!.isModelReady('m')).toBe(true);
    expect(existsSync(acquired)).toBe(true);
    await fixture.server!.unloadModel('m');
    await settle(() => !existsSync(acquired));
  });

  it('refuses setLocation() outside the load action, and agents that are not agents', async () => {
    let late: unknown;
    const lateMover: RepositoryAgent = {
      name: 'late',
      modelAction(model, action) {
        if (action !== 'load_complete') return;
        try {
          model.setLocation('/elsewhere');
        } catch (error) {
          late = error;
        }
      },
    };
    await start({ m: { config: withAgents(agents('{ name: "late" }')) } }, { repositoryAgents: [lateMover] });
    expect(await fixture.server!.isModelReady('m')).toBe(true);
    expect(late).toMatchObject({ code: 'INVALID_ARG', message: "repository agent 'late': setLocation() is allowed only during the load action, not load_complete" });
    await expect(InferenceServer.start({ modelRepository: fixture.repo!.path, repositoryAgents: [{ name: 'x' } as RepositoryAgent] })).rejects.toThrow(/each agent needs a non-empty `name` and a `modelAction` method/);
    await expect(InferenceServer.start({ modelRepository: fixture.repo!.path, repositoryAgents: [lateMover, lateMover] })).rejects.toThrow("two agents are named 'late'");
  });
});

/** Waits (up to 2 s) for work the server finishes in the background after a call returns. */
async function settle(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 10) {
    if (waited > 2000) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
