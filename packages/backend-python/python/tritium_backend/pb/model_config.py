"""ModelConfig: the configuration given to auto_complete_config()."""

import json as _json


class ModelConfig:
    """The model configuration given to auto_complete_config()."""

    def __init__(self, model_config):
        if isinstance(model_config, (str, bytes, bytearray)):
            model_config = _json.loads(model_config)
        self._model_config = model_config

    def as_dict(self):
        return self._model_config

    def _name(self):
        return str(self._model_config.get("name", ""))

    def set_max_batch_size(self, max_batch_size):
        current = self._model_config.get("max_batch_size", 0) or 0
        if current > max_batch_size:
            raise ValueError(
                "configuration specified max_batch_size %d, but in auto-complete-config "
                "function for model '%s' specified max_batch_size %d"
                % (current, self._name(), max_batch_size))
        self._model_config["max_batch_size"] = max_batch_size

    def set_dynamic_batching(self):
        for other in ("sequence_batching", "ensemble_scheduling"):
            if self._model_config.get(other) is not None:
                raise ValueError(
                    "Configuration specified scheduling_choice as '%s', but "
                    "auto-complete-config function for model '%s' tries to set "
                    "scheduling_choice as 'dynamic_batching'" % (other, self._name()))
        if self._model_config.get("dynamic_batching") is None:
            self._model_config["dynamic_batching"] = {}

    def _add_io(self, kind, io, valid):
        if not isinstance(io, dict):
            raise ValueError("%s in auto-complete-config function for model '%s' must be a dict"
                             % (kind, self._name()))
        label = io.get("name", "")
        for prop in io:
            if prop not in valid:
                raise ValueError(
                    "%s '%s' in auto-complete-config function for model '%s' contains "
                    "property other than %s." % (kind, label, self._name(),
                                                 ", ".join("'%s'" % v for v in valid)))
        if "name" not in io:
            raise ValueError("%s in auto-complete-config function for model '%s' is missing "
                             "'name' property." % (kind, self._name()))
        for required in ("data_type", "dims"):
            if required not in io:
                raise ValueError(
                    "%s '%s' in auto-complete-config function for model '%s' is missing "
                    "'%s' property." % (kind, label, self._name(), required))
        key = "input" if kind == "input" else "output"
        entries = self._model_config.get(key)
        if entries is None:
            entries = self._model_config[key] = []
        for cur in entries:
            if cur.get("name") != label:
                continue
            cur_type = cur.get("data_type", "TYPE_INVALID")
            if cur_type not in ("TYPE_INVALID", "", None) and cur_type != io["data_type"]:
                raise ValueError(
                    "unable to load model '%s', configuration expects datatype %s for %s "
                    "'%s', model provides %s" % (self._name(), cur_type, kind, label,
                                                 io["data_type"]))
            cur_dims = cur.get("dims")
            if cur_dims and list(cur_dims) != list(io["dims"]):
                raise ValueError(
                    "model '%s', tensor '%s': the model expects dims %s but the model "
                    "configuration specifies dims %s" % (self._name(), label,
                                                         list(io["dims"]), list(cur_dims)))
            if ("optional" in cur and "optional" in io
                    and bool(cur["optional"]) != bool(io["optional"])):
                raise ValueError(
                    "model '%s', tensor '%s': the model expects optional %s but the model "
                    "configuration specifies optional %s" % (self._name(), label,
                                                             io["optional"], cur["optional"]))
            cur["data_type"] = io["data_type"]
            cur["dims"] = io["dims"]
            if "optional" in io:
                cur["optional"] = io["optional"]
            return
        entries.append(io)

    def add_input(self, input):
        self._add_io("input", input, ("name", "data_type", "dims", "optional"))

    def add_output(self, output):
        self._add_io("output", output, ("name", "data_type", "dims"))

    def set_model_transaction_policy(self, transaction_policy_dict):
        for prop in transaction_policy_dict:
            if prop != "decoupled":
                raise ValueError(
                    "model transaction property in auto-complete-config function for "
                    "model '%s' contains property other than 'decoupled'." % self._name())
        policy = self._model_config.get("model_transaction_policy")
        if policy is None:
            policy = self._model_config["model_transaction_policy"] = {}
        if "decoupled" in transaction_policy_dict:
            want = transaction_policy_dict["decoupled"]
            if "decoupled" in policy and policy["decoupled"] != want:
                raise ValueError(
                    "trying to change decoupled property in auto-complete-config for "
                    "model '%s', which is already set to '%s'." % (self._name(),
                                                                  policy["decoupled"]))
            policy["decoupled"] = want
