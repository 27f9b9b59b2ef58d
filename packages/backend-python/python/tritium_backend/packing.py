"""Tensors in and out of the shared-memory arenas."""

import numpy as np

from .pb.requests import InferenceRequest
from .pb.tensor import Tensor, deserialize_bytes_tensor, serialize_byte_tensor
from .pb.types import _WIRE_TO_NP


class Packing:
    """Execute requests and BLS responses read from Node's regions; tensors packed into the stub's arena."""

    def _incoming(self, r):
        """An execute request R -> InferenceRequest (by the thread that read
        the frame). Inputs are zero-copy views of Node's region, made lazily."""
        inputs = []
        regions = self.regions
        Tensor_lazy = Tensor._lazy
        for t in r["inputs"]:
            nbytes = t["nbytes"]
            mm = regions.get(t["region"]) if nbytes else None
            inputs.append(Tensor_lazy(t["name"], t["datatype"],
                                      (mm, t["offset"], nbytes, t["shape"])))
        cid = r.get("correlation_id", 0)
        if "correlation_id_str" in r:
            try:
                cid = int(r["correlation_id_str"])
            except ValueError:
                cid = r["correlation_id_str"]
        req = InferenceRequest._incoming(
            r["rid"], r.get("request_id", ""), cid, inputs, r.get("requested") or [],
            r.get("parameters") or {}, r.get("flags", 0), r.get("timeout", 0),
            r.get("priority", 0), self.model_name, self.model_version)
        self.live[r["rid"]] = req
        return req

    def _received(self, refs):
        """Tensors of a bls_response, copied out of Node's region."""
        out = []
        for t in refs:
            wire = t["datatype"]
            nbytes = t["nbytes"]
            shape = t["shape"]
            if wire == "BYTES":
                if nbytes:
                    mm = self.regions.get(t["region"])
                    off = t["offset"]
                    arr = deserialize_bytes_tensor(memoryview(mm)[off:off + nbytes])
                else:
                    arr = np.empty(0, dtype=np.object_)
                arr = arr.reshape(shape)
            else:
                dt = _WIRE_TO_NP[wire]
                if nbytes:
                    mm = self.regions.get(t["region"])
                    arr = np.frombuffer(mm, dt, nbytes // dt.itemsize, t["offset"])
                    arr = arr.reshape(shape).copy()
                else:
                    arr = np.zeros(shape, dt)
            out.append(Tensor._wrap(t["name"], wire, arr))
        return out

    def _pack(self, groups):
        """Copy the tensors of each group into Python's arena under one lease.
        Returns (lease, [[tensor refs] per group])."""
        sizes = []
        items = []
        for tensors in groups:
            for t in tensors:
                arr = t.as_numpy()
                if t._dt == "BYTES":
                    data = serialize_byte_tensor(arr)
                    if data is None:
                        data = arr.tobytes()
                    size = len(data)
                else:
                    data = arr
                    size = arr.nbytes
                items.append((t, arr, data, size))
                sizes.append(size)
        lease, places = self.arena.allocate(sizes)
        out = []
        k = 0
        for tensors in groups:
            refs = []
            for _ in tensors:
                t, arr, data, size = items[k]
                place = places[k]
                k += 1
                if place is None:
                    refs.append({"name": t._name, "datatype": t._dt, "shape": list(arr.shape),
                                 "region": "", "offset": 0, "nbytes": 0})
                    continue
                region, off = place
                if data is arr:
                    region.mv[off:off + size] = memoryview(arr.reshape(-1)).cast("B")
                else:
                    region.mv[off:off + size] = data
                refs.append({"name": t._name, "datatype": t._dt, "shape": arr.shape,
                             "region": region.name, "offset": off, "nbytes": size})
            out.append(refs)
        return lease, out
