import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFixture, type HttpFixture } from './helpers/http-fixture.js';
import { addModel } from './helpers/http-models.js';

/** Why Python cannot talk to the frontend here, or undefined when it can. */
const pythonMissing = (() => {
  try {
    execFileSync('python3', ['-c', 'import http.client'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'python3 is not available';
  }
})();
if (pythonMissing) console.warn(`skipping the Python http.client test: ${pythonMissing}`);

// A client that knows only the wire format: Python's http.client, JSON and struct, on one keep-alive connection.
const CLIENT = String.raw`
import http.client, json, struct, sys

conn = http.client.HTTPConnection(sys.argv[1], int(sys.argv[2]))

body = json.dumps({"id": "py-json", "inputs": [
    {"name": "INPUT0", "datatype": "FP32", "shape": [4], "data": [1.5, 2, 3, 4]},
    {"name": "INPUT1", "datatype": "FP32", "shape": [4], "data": [10, 20, 30, 40]}]})
conn.request("POST", "/v2/models/add/infer", body, {"Content-Type": "application/json"})
r = conn.getresponse()
as_json = {"status": r.status, "content_type": r.getheader("Content-Type"), "body": json.loads(r.read())}

header = json.dumps({"inputs": [
    {"name": "INPUT0", "datatype": "FP32", "shape": [4], "parameters": {"binary_data_size": 16}},
    {"name": "INPUT1", "datatype": "FP32", "shape": [4], "parameters": {"binary_data_size": 16}}],
    "outputs": [{"name": "OUTPUT0", "parameters": {"binary_data": True}}]}).encode()
tensors = struct.pack("<4f", 1, 2, 3, 4) + struct.pack("<4f", 0.5, 0.5, 0.5, 0.5)
conn.request("POST", "/v2/models/add/infer", header + tensors,
             {"Content-Type": "application/octet-stream", "Inference-Header-Content-Length": str(len(header))})
r = conn.getresponse()
raw = r.read()
length = int(r.getheader("Inference-Header-Content-Length"))
meta = json.loads(raw[:length])
size = meta["outputs"][0]["parameters"]["binary_data_size"]
as_binary = {"status": r.status, "content_type": r.getheader("Content-Type"), "meta": meta,
             "values": list(struct.unpack("<4f", raw[length:length + size])), "trailing": len(raw) - length - size}

print(json.dumps({"json": as_json, "binary": as_binary}))
`;

describe.skipIf(pythonMissing)("HTTP frontend with Python's http.client", () => {
  let fx: HttpFixture;
  beforeAll(async () => {
    fx = await startHttpFixture({ add: addModel });
  });
  afterAll(() => fx.stop());

  it('serves a JSON and a binary inference request parsed by hand', async () => {
    const { stdout } = await promisify(execFile)('python3', ['-c', CLIENT, '127.0.0.1', String(fx.frontend.port)]);
    const result = JSON.parse(stdout);
    expect(result.json).toEqual({
      status: 200,
      content_type: 'application/json',
      body: { id: 'py-json', model_name: 'add', model_version: '1', outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [4], data: [11.5, 22, 33, 44] }] },
    });
    expect(result.binary).toEqual({
      status: 200,
      content_type: 'application/octet-stream',
      meta: { model_name: 'add', model_version: '1', outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [4], parameters: { binary_data_size: 16 } }] },
      values: [1.5, 2.5, 3.5, 4.5],
      trailing: 0,
    });
  });
});
