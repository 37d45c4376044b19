"""The test tree's shared kits import by package name, whichever part of the tree runs.

This directory holds no ``__init__.py``, so pytest (in its default ``prepend`` import mode)
puts it on ``sys.path`` when it loads this file, before collecting anything below. The
kits the platforms' tests share then import as ``logspace.conformance`` (the log-space
conformance suite) and ``contract.harness`` (the recovery contract's harness) even when only
``tests/core`` or ``tests/zos`` is run, and the contract suite can import each platform's
``contract_configs`` (see ``contract/registry.py``).
"""
