"""Importing model.py as Triton does."""

import importlib.util
import os
import sys
import types


def import_model(model_file):
    """Import model.py by path, as Triton does: the version directory and the
    model directory go on sys.path, and the module is named
    '<version>.<file stem>' with '<version>' a package (relative imports work)."""
    import importlib.util
    import types
    version_dir = os.path.dirname(model_file)
    model_dir = os.path.dirname(version_dir)
    for p in (version_dir, model_dir):
        if p not in sys.path:
            sys.path.append(p)
    version = os.path.basename(version_dir)
    stem = os.path.splitext(os.path.basename(model_file))[0]
    if version.isidentifier() or version.isdigit():
        pkg = sys.modules.get(version)
        if pkg is None or getattr(pkg, "__path__", None) != [version_dir]:
            pkg = types.ModuleType(version)
            pkg.__path__ = [version_dir]
            pkg.__package__ = version
            sys.modules[version] = pkg
        name = "%s.%s" % (version, stem)
    else:
        name = stem
    spec = importlib.util.spec_from_file_location(name, model_file)
    if spec is None or spec.loader is None:
        raise ImportError("cannot load %s" % model_file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module
