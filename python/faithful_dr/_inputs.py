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
