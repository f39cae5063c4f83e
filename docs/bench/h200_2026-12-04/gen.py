"""Blobs for the device run: n points in D = 50 (20 centres, unit spread, float32) and the
projection their first two coordinates, as `faithful bench` builds its data.
usage: python3 gen.py N OUT_DIR"""
import sys
import numpy as np

n, out = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(42)
centres = rng.normal(scale=8.0, size=(20, 50))
x = (centres[rng.integers(0, 20, size=n)] + rng.normal(size=(n, 50))).astype(np.float32)
np.save(f"{out}/X.npy", x)
np.save(f"{out}/Y.npy", np.ascontiguousarray(x[:, :2]))
