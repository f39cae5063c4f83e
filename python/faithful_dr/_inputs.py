"""Array checks shared by the entry points: points as 2-D float64/float32, labels as int64."""

import numpy as np


def points(x, name):
    """A 2-D float64 or float32 array (C or Fortran order kept); integers become float64."""
    a = np.asarray(x)
    if a.dtype not in (np.float64, np.float32):
        if a.dtype.kind not in "iub":
            raise ValueError(f"{name}: expected float64 or float32 values, got dtype {a.dtype}")
        a = a.astype(np.float64)
    if a.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array (n points x D features), got {a.ndim}-D")
    return a


def projections(lows):
    """`lows` ({name: n x d array}) as [(name, points)], names as str: two keys that print
    alike (1 and "1") would name one projection twice, so they raise instead of one being lost."""
    pairs, seen = [], {}
    for key, low in lows.items():
        name = str(key)
        if name in seen:
            raise ValueError(f"lows: the keys {seen[name]!r} and {key!r} both name the projection {name!r}")
        seen[name] = key
        pairs.append((name, points(low, name)))
    return pairs


def labels(y):
    """One integer label per point, as a 1-D int64 array."""
    a = np.asarray(y)
    if a.ndim != 1:
        raise ValueError(f"labels: expected a 1-D array, got {a.ndim}-D")
    if a.dtype.kind not in "iu":
        raise ValueError(f"labels: expected integer labels, got dtype {a.dtype}")
    if a.dtype.kind == "u" and a.size and a.max() > np.iinfo(np.int64).max:
        raise ValueError("labels: a label is above the int64 range")
    return np.ascontiguousarray(a, dtype=np.int64)


def csr_graph(graph, name):
    """A kNN graph as the native layer takes it: (n, indptr int64, indices int64, data float64)
    of an n x n CSR matrix. Accepts SciPy sparse matrices and arrays (any format with
    ``tocsr()``) and a pair (indices, distances) of n x k arrays."""
    if isinstance(graph, tuple) and len(graph) == 2:
        idx, dist = (np.asarray(a) for a in graph)
        if idx.ndim != 2 or dist.shape != idx.shape:
            raise ValueError(f"{name}: (indices, distances) must be two n x k arrays of the same shape")
        if idx.dtype.kind not in "iu":
            raise ValueError(f"{name}: indices: expected integers, got dtype {idx.dtype}")
        n, k = idx.shape
        indptr = np.arange(0, n * k + 1, k, dtype=np.int64)
        return (n, indptr, np.ascontiguousarray(idx, dtype=np.int64).ravel(),
                np.ascontiguousarray(dist, dtype=np.float64).ravel())
    if not hasattr(graph, "tocsr"):
        raise ValueError(f"{name}: expected a SciPy sparse matrix (e.g. adata.obsp['distances']) or (indices, distances)")
    g = graph.tocsr()
    rows, cols = g.shape
    if rows != cols:
        raise ValueError(f"{name}: a kNN graph is n x n, got shape {g.shape}")
    return (int(rows), np.ascontiguousarray(g.indptr, dtype=np.int64), np.ascontiguousarray(g.indices, dtype=np.int64),
            np.ascontiguousarray(g.data, dtype=np.float64))
