"""Tritium's Python stub, as a package (tritium_stub.py is its launcher; its
docstring lists the modules). Models import triton_python_backend_utils,
which re-exports tritium_backend.pb."""
