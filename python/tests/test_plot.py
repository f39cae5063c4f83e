"""faithful_dr.plot (Agg), Evaluator.views, Result._repr_html_ and faithful_dr.report: every
plot function draws the library's exact data (pixels and plotted arrays compared with the
result's), with the page's colour scales (read from web/views/colour.js); the report is the
CLI's bytes."""

import json
import re
import subprocess

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import faithful_dr  # noqa: E402
from faithful_dr import plot  # noqa: E402
from conftest import REPO, blobs  # noqa: E402

K = 8


@pytest.fixture(scope="module")
def data():
    high, low, labels = blobs(n=220, d=5, seed=11)
    low2 = low[:, ::-1] * np.array([1.0, -1.0]) + 0.3 * np.random.default_rng(1).normal(size=low.shape)
    ev = faithful_dr.Evaluator(high, labels=labels, backend="cpu")
    views = ev.views({"a": low, "b": low2}, [f"tnc:k={K}", "stress", "srho", "coranking"], k=K, shepard_bins=24)
    return high, {"a": low, "b": low2}, labels, views


def _js_array(name):
    """A numeric constant of web/views/colour.js, as a list of triples."""
    text = (REPO / "web" / "views" / "colour.js").read_text()
    m = re.search(rf"export const {name} = (\[[^;]*\]|\{{[^;]*\}});", text, re.S)
    assert m, name
    return [tuple(int(v) for v in t) for t in re.findall(r"\[(\d+), (\d+), (\d+)\]", m.group(1))]


def test_colour_scales_are_the_pages():
    corners = _js_array("CHECKVIZ_CORNERS")
    assert corners == [plot.CHECKVIZ_CORNERS[k] for k in ("kept", "falseNeighbours", "missingNeighbours", "both")]
    assert _js_array("RANK_STOPS") == plot.RANK_STOPS
    # The page's formula at its corners and centre.
    c = plot.checkviz_colours([1.0, 0.5, 1.0, 0.5, 0.75], [1.0, 1.0, 0.5, 0.5, 0.75], 0.5)
    assert c[:4].tolist() == [list(v) for v in corners]
    assert c[4].tolist() == [int(np.floor(np.mean([v[ch] for v in corners]) + 0.5)) for ch in range(3)]


def test_views_are_the_exact_lists_and_counts(data, cli, tmp_path):
    high, lows, labels, views = data
    n = len(high)
    idx, _ = faithful_dr.knn(high, K, backend="cpu")
    assert np.array_equal(views.knn_high, idx)
    a = views.projections["a"]
    assert np.array_equal(a.knn_low, faithful_dr.knn(lows["a"], K, backend="cpu")[0])
    assert a.shepard["pairs"] == n * (n - 1) // 2 == a.shepard["counts"].sum()
    assert a.coranking["counts"].sum() == n * (n - 1)
    coranking = next(s for s in views.result.projections["a"] if s.id == "coranking")
    assert np.array_equal(coranking.curves["rnx"], a.coranking["rnx"])
    # The CLI's views --json, for the same data.
    for name, arr in {"hd": high, "a": lows["a"]}.items():
        np.save(tmp_path / f"{name}.npy", arr)
    out = subprocess.run(
        [cli, "views", "--high", str(tmp_path / "hd.npy"), "--low", str(tmp_path / "a.npy"), "--k", str(K),
         "--shepard-bins", "24", "--spec", f"tnc:k={K}", "--json", "--backend", "cpu"],
        check=True, capture_output=True, text=True,
    ).stdout
    doc = json.loads(out)
    nb = doc["projections"][0]["views"]["neighbourhoods"]
    assert nb["rank_low_of_high"] == a.rank_low_of_high.ravel().tolist()
    assert nb["rank_high_of_low"] == a.rank_high_of_low.ravel().tolist()
    assert doc["projections"][0]["views"]["shepard"]["counts"] == a.shepard["counts"].ravel().tolist()


def test_checkviz_pixels_are_the_local_values_colours(data):
    _, lows, _, views = data
    Y = lows["a"]
    ax = plot.checkviz(views.result, Y, projection="a", k=K)
    img = ax.images[0].get_array()
    x0, x1, y0, y1 = ax.images[0].get_extent()
    tnc = next(s for s in views.result.projections["a"] if s.id == "tnc")
    t, c = tnc.local["local_trustworthiness"], tnc.local["local_continuity"]
    want = plot.checkviz_colours(t, c, plot.checkviz_low(t, c))
    h, w = img.shape[:2]
    checked = 0
    for i in range(len(Y)):
        col = int((Y[i, 0] - x0) / (x1 - x0) * w)
        row = int((y1 - Y[i, 1]) / (y1 - y0) * h)
        patch = img[max(0, row - 1) : row + 2, max(0, col - 1) : col + 2].reshape(-1, 3)
        # Where the point's cell is larger than its neighbourhood of pixels, every pixel there is its colour.
        if (patch == patch[0]).all():
            assert patch[0].tolist() == want[i].tolist(), i
            checked += 1
    assert checked > len(Y) // 2
    plt.close("all")


def test_reliability_map_draws_every_edge_in_its_rank_colour(data):
    _, lows, _, views = data
    n, k = views.knn_high.shape
    ax = plot.reliability_map(views, lows["a"], projection="a")
    lc = ax.collections[-1]
    assert len(lc.get_segments()) == n * k
    ranks = views.projections["a"].rank_low_of_high.ravel()
    order = np.lexsort((np.arange(n * k), ranks))
    t = plot.rank_t(ranks[order], k, n)
    got = np.round(lc.get_colors()[:, :3] * 255).astype(int)
    torn = t >= 0
    assert np.array_equal(got[torn], plot.rank_colours(t[torn]).astype(int))
    assert (got[~torn] == np.array(plot.KEPT)).all()
    # Segment ends are the point and its original neighbour.
    first = order[-1]
    seg = lc.get_segments()[-1]
    assert np.allclose(seg[0], lows["a"][first // k]) and np.allclose(seg[1], lows["a"][views.knn_high.ravel()[first]])
    ax = plot.reliability_map(views, lows["a"], projection="a", q=10)
    assert len(ax.collections[-1].get_segments()) == int(np.ceil(n * k / 10))
    plt.close("all")


def test_shepard_and_coranking_show_the_counts(data):
    _, _, _, views = data
    ax = plot.shepard(views, projection="b")
    s = views.projections["b"].shepard
    arr = ax.images[0].get_array()
    assert np.array_equal(arr.filled(0), s["counts"].T.astype(float))
    assert "stress" in ax.get_title() and "Spearman" in ax.get_title()
    ax = plot.coranking_matrix(views, projection="b")
    c = views.projections["b"].coranking
    w = np.diff(c["edges"].astype(float))
    dens = np.asarray(ax.collections[0].get_array()).reshape(len(w), len(w))
    want = c["counts"] / (w[:, None] * w[None, :])
    assert np.allclose(np.where(want > 0, dens, 0), want, rtol=0, atol=0)
    plt.close("all")


def test_curves_plot_the_rnx_arrays(data):
    _, _, _, views = data
    ax = plot.curves(views.result, keys=("rnx", "trustworthiness"))
    rnx = next(s for s in views.result.projections["a"] if s.id == "coranking").curves["rnx"]
    assert np.array_equal(ax.lines[0].get_ydata(), rnx)
    assert len(ax.lines) == 4
    ax = plot.curves(views)
    assert np.array_equal(ax.lines[1].get_ydata(), views.projections["b"].coranking["rnx"])
    plt.close("all")


def test_repr_html_has_the_scores_and_the_curve(data):
    _, _, _, views = data
    html = views.result._repr_html_()
    tnc = next(s for s in views.result.projections["a"] if s.id == "tnc")
    assert f"{tnc.values['trustworthiness']:.6g}" in html and "<table" in html
    assert "<svg" in html and "R_NX" in html
    plain = faithful_dr.Evaluator(data[0], backend="cpu").measure(data[1]["a"], ["tnc"])._repr_html_()
    assert "<svg" not in plain and "trustworthiness" in plain


def test_report_is_the_clis_file(data, cli, tmp_path):
    high, lows, labels, _ = data
    for name, arr in {"hd.npy": high, "a.npy": lows["a"], "b.npy": lows["b"], "y.npy": labels}.items():
        np.save(tmp_path / name, arr)
    out = tmp_path / "cli.html"
    subprocess.run(
        [cli, "report", "--high", str(tmp_path / "hd.npy"), "--low", str(tmp_path / "a.npy"), "--low", str(tmp_path / "b.npy"),
         "--labels", str(tmp_path / "y.npy"), "--k", "6", "--out", str(out), "--backend", "cpu"],
        check=True, capture_output=True,
    )
    ev = faithful_dr.Evaluator(high, labels=labels, backend="cpu", _name="hd.npy")
    left = ev.report({"a.npy": lows["a"], "b.npy": lows["b"]}, tmp_path / "py.html", k=6, title="faithful report: hd.npy")
    assert left == []
    assert (tmp_path / "py.html").read_bytes() == out.read_bytes()
    # The module function writes a report too, and says what it left out.
    # A limit one byte under the whole report's size: the kNN lists (the last in priority) go.
    assert faithful_dr.report(high, lows["a"], tmp_path / "full.html", k=6, backend="cpu") == []
    full = (tmp_path / "full.html").stat().st_size
    left = faithful_dr.report(high, lows["a"], tmp_path / "small.html", k=6, max_bytes=full - 1, backend="cpu")
    assert len(left) == 1 and "kNN lists" in left[0], left
    assert (tmp_path / "small.html").stat().st_size < full
    assert "Left out of this report" in (tmp_path / "small.html").read_text()
    # A limit below the scores alone: ValueError with the size needed, and no file.
    with pytest.raises(ValueError, match=r"^report: parameter max_size=1000: the smallest report .* bytes\)$"):
        faithful_dr.report(high, lows["a"], tmp_path / "none.html", k=6, max_bytes=1000, backend="cpu")
    assert not (tmp_path / "none.html").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


def test_report_on_a_constant_projection_leaves_srho_out_and_says_why(data, tmp_path):
    high = data[0]
    flat = np.full((high.shape[0], 2), 1.5)
    left = faithful_dr.report(high, {"flat": flat}, tmp_path / "flat.html", k=6, backend="cpu")
    assert len(left) == 1 and left[0].startswith("srho (the Shepard caption)"), left
    assert "flat" in left[0] and "constant" in left[0], left
    assert "Left out of this report" in (tmp_path / "flat.html").read_text()
    # Asked for by name, srho is still an error.
    with pytest.raises(Exception, match="srho"):
        faithful_dr.report(high, {"flat": flat}, tmp_path / "asked.html", ["srho"], k=6, backend="cpu")


def test_views_leave_an_undefined_optional_spec_out_of_that_projection_only(data):
    high, lows = data[0], data[1]
    flat = np.full((high.shape[0], 2), 1.5)
    ev = faithful_dr.Evaluator(high, backend="cpu")
    v = ev.views({"a": lows["a"], "flat": flat}, [f"tnc:k={K}"], k=K, shepard_bins=8, optional=["stress", "srho"])
    ids = {name: [s.id for s in scores] for name, scores in v.result.projections.items()}
    assert ids == {"a": ["tnc", "stress", "srho"], "flat": ["tnc", "stress"]}
    assert v.projections["a"].left_out == ()
    ((measure, reason),) = v.projections["flat"].left_out
    assert measure == "srho" and "constant" in reason, reason
    # srho on "a" is the value srho as a spec gives; the table shows "—" for flat's.
    alone = ev.measure(lows["a"], ["srho"]).scores[0]
    assert v.result.projections["a"][2].values == alone.values
    table = v.result._repr_html_()
    assert "—" in table and "spearman_rho" in table
    assert json.loads(v.to_json())["projections"][1]["left_out"][0]["id"] == "srho"
    # The Shepard diagram's title: ρ where defined, not on flat.
    for name, has_rho in (("a", True), ("flat", False)):
        ax = plot.shepard(v, projection=name)
        assert ("Spearman ρ" in ax.get_title()) == has_rho, ax.get_title()
        plt.close(ax.figure)
    # Another error of an optional spec raises, as a spec's does (nh needs labels).
    with pytest.raises(Exception, match="nh"):
        ev.views({"a": lows["a"]}, [f"tnc:k={K}"], k=K, optional=["nh"])
