"""Custom metrics: MetricFamily and Metric."""

import collections as _collections
import enum as _enum
import threading as _threading

from .. import connection as _connection
from .errors import TritonModelException


class MetricKind(_enum.IntEnum):
    COUNTER = 0
    GAUGE = 1
    HISTOGRAM = 2


_KIND_WIRE = {MetricKind.COUNTER: "counter", MetricKind.GAUGE: "gauge",
              MetricKind.HISTOGRAM: "histogram"}
_metric_ids = iter(range(1, 1 << 62))
_dropped_metrics = _collections.deque()
_metric_lock = _threading.Lock()


def _send_metric(frame):
    s = _connection.current()
    if s is not None:
        s.metric(frame)


class MetricFamily:
    """A named family of metrics: MetricFamily(name, description, kind) with
    kind MetricFamily.COUNTER, GAUGE or HISTOGRAM."""

    COUNTER = MetricKind.COUNTER
    GAUGE = MetricKind.GAUGE
    HISTOGRAM = MetricKind.HISTOGRAM

    def __init__(self, name, description, kind):
        if not isinstance(name, str) or not name:
            raise TritonModelException("MetricFamily name must be a non-empty str")
        if not isinstance(description, str):
            raise TritonModelException("MetricFamily description must be a str")
        if isinstance(kind, str):
            try:
                kind = MetricKind[kind.upper()]
            except KeyError:
                kind = None
        try:
            kind = MetricKind(kind)
        except (ValueError, TypeError):
            raise TritonModelException(
                "MetricFamily kind must be MetricFamily.COUNTER, GAUGE or HISTOGRAM") from None
        self._name = name
        self._description = description
        self._kind = kind
        _send_metric({"t": "metric", "op": "family", "family": name,
                      "description": description, "kind": _KIND_WIRE[kind]})

    def Metric(self, labels=None, buckets=None):
        return Metric(self, labels, buckets)


class Metric:
    """One metric of a family, for one set of labels."""

    def __init__(self, family, labels=None, buckets=None):
        if labels is None:
            labels = {}
        if not isinstance(labels, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
            raise TritonModelException("Metric labels must be a dict of str to str")
        kind = family._kind
        if kind == MetricKind.HISTOGRAM:
            if buckets is None:
                raise TritonModelException("Missing required buckets for histogram metrics")
            buckets = [float(b) for b in buckets]
            if any(b2 <= b1 for b1, b2 in zip(buckets, buckets[1:])):
                raise TritonModelException("histogram buckets must be increasing")
        elif buckets is not None:
            raise TritonModelException("buckets are only allowed for histogram metrics")
        with _metric_lock:
            self._id = next(_metric_ids)
        self._family = family
        self._kind = kind
        self._labels = dict(labels)
        self._buckets = buckets
        self._value = 0.0
        self._sum = 0.0
        self._count = 0
        self._bucket_counts = [0] * (len(buckets) + 1) if buckets is not None else None
        frame = {"t": "metric", "op": "metric", "family": family._name, "id": self._id,
                 "labels": self._labels}
        if buckets is not None:
            frame["buckets"] = buckets
        _send_metric(frame)

    def increment(self, value):
        value = float(value)
        if self._kind == MetricKind.HISTOGRAM:
            raise TritonModelException("increment() is not supported for histogram metrics")
        if self._kind == MetricKind.COUNTER and value < 0:
            raise TritonModelException("counters can only be incremented by a non-negative value")
        self._value += value
        _send_metric({"t": "metric", "op": "increment", "id": self._id, "value": value})

    def set(self, value):
        value = float(value)
        if self._kind != MetricKind.GAUGE:
            raise TritonModelException("set() is only supported for gauge metrics")
        self._value = value
        _send_metric({"t": "metric", "op": "set", "id": self._id, "value": value})

    def observe(self, value):
        value = float(value)
        if self._kind != MetricKind.HISTOGRAM:
            raise TritonModelException("observe() is only supported for histogram metrics")
        self._sum += value
        self._count += 1
        i = 0
        for i, b in enumerate(self._buckets):
            if value <= b:
                break
        else:
            i = len(self._buckets)
        self._bucket_counts[i] += 1
        _send_metric({"t": "metric", "op": "observe", "id": self._id, "value": value})

    def value(self):
        if self._kind == MetricKind.HISTOGRAM:
            raise TritonModelException("value() is not supported for histogram metrics")
        return self._value

    def __del__(self):
        # __del__ may run inside a frame write (GC): only queue the id; the
        # stub sends the drop with its next frame.
        try:
            _dropped_metrics.append(self._id)
        except Exception:
            pass
