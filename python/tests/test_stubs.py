"""The type stubs (faithful_dr/*.pyi, with py.typed) ship in the package and name the same
parameters, in the same order, as the functions they describe."""

import ast
import inspect
from pathlib import Path

import faithful_dr
from faithful_dr import dask, evaluator, peers, shard, sklearn

PACKAGE = Path(faithful_dr.__file__).parent


def stub_params(stub, qualname):
    """Parameter names of `qualname` ("f" or "Class.method") in the stub file `stub`."""
    tree = ast.parse((PACKAGE / stub).read_text())
    scope = tree.body
    *classes, name = qualname.split(".")
    for c in classes:
        scope = next(n for n in scope if isinstance(n, ast.ClassDef) and n.name == c).body
    fn = next(n for n in scope if isinstance(n, ast.FunctionDef) and n.name == name)
    a = fn.args
    return [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]


def test_the_stubs_and_the_marker_are_installed():
    for name in ("py.typed", "_native.pyi", "evaluator.pyi", "sklearn.pyi", "shard.pyi", "dask.pyi", "peers.pyi"):
        assert (PACKAGE / name).is_file(), name


def test_stubs_name_the_parameters_of_the_python_api():
    for stub, obj, qualname in [
        ("evaluator.pyi", evaluator.Evaluator.__init__, "Evaluator.__init__"),
        ("evaluator.pyi", evaluator.Evaluator.measure, "Evaluator.measure"),
        ("evaluator.pyi", evaluator.Evaluator.measure_many, "Evaluator.measure_many"),
        ("evaluator.pyi", evaluator.Evaluator.knn, "Evaluator.knn"),
        ("evaluator.pyi", evaluator.Evaluator.map_rows, "Evaluator.map_rows"),
        ("evaluator.pyi", evaluator.knn, "knn"),
        ("shard.pyi", shard.shard_plan, "shard_plan"),
        ("shard.pyi", shard.check_shardable, "check_shardable"),
        ("shard.pyi", shard.fold, "fold"),
        ("dask.pyi", dask.measure, "measure"),
        ("sklearn.pyi", sklearn.trustworthiness, "trustworthiness"),
        ("sklearn.pyi", sklearn.continuity, "continuity"),
    ] + [("peers.pyi", getattr(peers, f), f) for f in dir(peers) if not f.startswith("_") and callable(getattr(peers, f)) and getattr(peers, f).__module__ == peers.__name__]:
        assert stub_params(stub, qualname) == list(inspect.signature(obj).parameters), qualname


def test_the_native_stub_names_every_native_function_and_class():
    tree = ast.parse((PACKAGE / "_native.pyi").read_text())
    declared = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    native = {n for n in dir(faithful_dr._native) if not n.startswith("_")}
    assert declared == native
    assert stub_params("_native.pyi", "example") == ["projection"]
    # Every native function's parameters, as PyO3 records them, in the stub's order.
    for name in sorted(native):
        obj = getattr(faithful_dr._native, name)
        if callable(obj) and not isinstance(obj, type):
            assert stub_params("_native.pyi", name) == list(inspect.signature(obj).parameters), name
