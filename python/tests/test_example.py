"""faithful_dr.example(): the bundled UCI digits as NumPy arrays, the same data the CLI's
`--example` scores."""

import numpy as np
import pytest

import faithful_dr


def test_example_is_the_bundled_digits_with_a_projection():
    high, low, labels = faithful_dr.example()
    assert high.shape == (1797, 64) and high.dtype == np.float64
    assert low.shape == (1797, 2) and low.dtype == np.float64
    assert labels.shape == (1797,) and labels.dtype == np.int64
    assert sorted(set(labels.tolist())) == list(range(10))
    # Pixel intensities 0..16, as scikit-learn's load_digits.
    assert high.min() == 0 and high.max() == 16 and np.all(high == np.round(high))
    _, rp, labels_rp = faithful_dr.example("random_projection")
    assert rp.shape == (1797, 2) and not np.array_equal(rp, low)
    np.testing.assert_array_equal(labels, labels_rp)
    # It scores like any other data: the PCA keeps most neighbours of the digits.
    res = faithful_dr.Evaluator(high, labels=labels, backend="cpu").measure(low, ["tnc:k=10"])
    assert 0.5 < res.scores[0].values["trustworthiness"] <= 1.0


def test_example_rejects_an_unknown_projection():
    with pytest.raises(ValueError, match="unknown projection 'umap'"):
        faithful_dr.example("umap")
