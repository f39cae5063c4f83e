"""Matplotlib views of faithful's exact results, with the colour scales of the page and of
``faithful report`` (the numbers of web/views/colour.js, checked against it by the tests):

- `checkviz(result, Y)`: the projection's Voronoi cells (a raster at the figure's resolution)
  coloured by local trustworthiness and continuity on CheckViz's two-dimensional scale;
- `reliability_map(views, Y)`: the original space's kNN edges on the projection, coloured by
  their projection rank (optionally only the worst q %);
- `shepard(views)`: the binned Shepard diagram (exact counts of every pair) as a heatmap;
- `coranking_matrix(views)`: the co-ranking matrix in log bins of K;
- `curves(result_or_views)`: R_NX(K) (and the co-ranking family's other curves) on a log-K axis.

Each returns the Axes it drew on (a new figure's unless ``ax=`` is given). The data come from
`Evaluator.measure` (local values) and `Evaluator.views` (lists, ranks and tallies): nothing
here recomputes a neighbour, a rank or a count. Needs matplotlib (``pip install matplotlib``).
"""

import math

import numpy as np

#: CheckViz's corners (web/views/colour.js CHECKVIZ_CORNERS): kept, low T (false neighbours),
#: low C (missing neighbours), both low.
CHECKVIZ_CORNERS = {
    "kept": (247, 247, 247),
    "falseNeighbours": (230, 97, 1),
    "missingNeighbours": (94, 60, 153),
    "both": (30, 30, 30),
}
#: The reliability map's rank scale (web/views/colour.js RANK_STOPS), light to dark.
RANK_STOPS = [(253, 212, 158), (252, 141, 89), (215, 48, 31), (127, 0, 0)]
#: A kept edge (web/views/colour.js KEPT).
KEPT = (176, 184, 201)


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - the message is the point
        raise ImportError("faithful_dr.plot needs matplotlib (pip install matplotlib)") from e
    return plt


def _axes(ax, size=(6.4, 5.2)):
    if ax is not None:
        return ax
    _, ax = _pyplot().subplots(figsize=size)
    return ax


def checkviz_low(t, c):
    """The low end shared by both axes of the CheckViz scale: the smallest finite local value
    (0 when none is below 1), as the page computes it."""
    v = np.concatenate([np.asarray(t, float), np.asarray(c, float)])
    v = v[np.isfinite(v)]
    lo = float(v.min()) if v.size else 1.0
    return lo if lo < 1 else 0.0


def checkviz_colours(t, c, lo):
    """CheckViz colours (n x 3 uint8) of local trustworthiness `t` and continuity `c` on the
    scale [lo, 1]: the page's bilinear mix of the four corners, rounded half up. Points without
    a value (NaN) get -1 in every channel (int16)."""
    t = np.asarray(t, float)
    c = np.asarray(c, float)
    span = 1.0 - lo
    u = np.clip((1 - t) / span, 0, 1)
    v = np.clip((1 - c) / span, 0, 1)
    k = {key: np.asarray(val, float) for key, val in CHECKVIZ_CORNERS.items()}
    mix = (
        k["kept"] * ((1 - u) * (1 - v))[:, None]
        + k["falseNeighbours"] * (u * (1 - v))[:, None]
        + k["missingNeighbours"] * ((1 - u) * v)[:, None]
        + k["both"] * (u * v)[:, None]
    )
    out = np.floor(mix + 0.5).astype(np.int16)
    out[~(np.isfinite(t) & np.isfinite(c))] = -1
    return out


def rank_t(r, k, n):
    """Where projection rank r (of an original neighbour) falls on the reliability scale: -1 for
    a kept edge (r <= k), else log(r/k) / log((n-1)/k), at most 1."""
    r = np.asarray(r, float)
    t = np.minimum(1.0, np.log(np.maximum(r, 1) / k) / math.log(max(n - 1, k + 1) / k))
    return np.where(r <= k, -1.0, t)


def rank_colours(t):
    """The reliability scale at t in [0, 1] (n x 3 uint8), piecewise linear over RANK_STOPS."""
    s = np.clip(np.asarray(t, float), 0, 1) * (len(RANK_STOPS) - 1)
    i = np.minimum(len(RANK_STOPS) - 2, np.floor(s).astype(int))
    f = (s - i)[:, None]
    stops = np.asarray(RANK_STOPS, float)
    return np.floor(stops[i] + (stops[i + 1] - stops[i]) * f + 0.5).astype(np.uint8)


def _views_of(views, projection):
    name = projection if projection is not None else next(iter(views.projections))
    return name, views.projections[name]


def _tnc(result, projection, k):
    """The tnc score (at k, else any) of `projection` in a Result (or a Views' result)."""
    result = getattr(result, "result", result)
    name = projection if projection is not None else next(iter(result.projections))
    tncs = [s for s in result.projections[name] if s.id == "tnc" and s.local]
    if not tncs:
        raise ValueError(f"checkviz: no tnc score with per-point values for '{name}' (measure 'tnc' with local=True)")
    at_k = [s for s in tncs if k is not None and s.params.get("k") == k]
    return name, (at_k or tncs)[0]


def _xy(Y):
    Y = np.asarray(Y, float)
    if Y.ndim != 2 or Y.shape[1] < 2:
        raise ValueError("Y: expected the n x 2 (or wider) projection")
    return Y[:, 0], Y[:, 1]


def voronoi_raster(x, y, width, height, extent, max_radius):
    """The raster Voronoi of points (x, y): for each of height x width pixels over `extent`
    (x0, x1, y0, y1; row 0 at the top), the nearest point within `max_radius` (data units),
    -1 beyond. Uses scipy's cKDTree when available."""
    x0, x1, y0, y1 = extent
    px = x0 + (np.arange(width) + 0.5) * (x1 - x0) / width
    py = y1 - (np.arange(height) + 0.5) * (y1 - y0) / height
    gx, gy = np.meshgrid(px, py)
    q = np.column_stack([gx.ravel(), gy.ravel()])
    pts = np.column_stack([x, y])
    try:
        from scipy.spatial import cKDTree

        d, owner = cKDTree(pts).query(q, distance_upper_bound=max_radius)
        owner = np.where(np.isfinite(d), owner, -1)
    except ImportError:
        owner = np.empty(len(q), dtype=np.int64)
        best = np.empty(len(q))
        for s in range(0, len(q), 4096):
            d2 = ((q[s : s + 4096, None, :] - pts[None, :, :]) ** 2).sum(-1)
            owner[s : s + 4096] = d2.argmin(1)
            best[s : s + 4096] = d2.min(1)
        owner = np.where(best <= max_radius**2, owner, -1)
    return owner.reshape(height, width)


def checkviz(result, Y, *, projection=None, k=None, ax=None, resolution=480, legend=True):
    """CheckViz of projection `Y` (n x 2): each point's Voronoi cell, rasterised at
    `resolution` pixels along the longer side, coloured by its local trustworthiness and
    continuity (from `result`'s tnc score with per-point values, at `k` when given) on the
    page's two-dimensional scale; cells of points without values are hollow (white). Returns
    the Axes; the image is ``ax.images[0]``."""
    name, score = _tnc(result, projection, k)
    t = np.asarray(score.local["local_trustworthiness"], float)
    c = np.asarray(score.local["local_continuity"], float)
    x, y = _xy(Y)
    if len(x) != len(t):
        raise ValueError(f"Y: {len(x)} rows, but the result has {len(t)} points")
    lo = checkviz_low(t, c)
    colours = checkviz_colours(t, c, lo)
    ax = _axes(ax)
    xr, yr = np.ptp(x) or 1.0, np.ptp(y) or 1.0
    pad = 0.02 * max(xr, yr)
    extent = (x.min() - pad, x.max() + pad, y.min() - pad, y.max() + pad)
    w = resolution if xr >= yr else max(1, int(round(resolution * (xr + 2 * pad) / (yr + 2 * pad))))
    h = resolution if yr > xr else max(1, int(round(resolution * (yr + 2 * pad) / (xr + 2 * pad))))
    spacing = math.sqrt((xr + 2 * pad) * (yr + 2 * pad) / len(x))
    owner = voronoi_raster(x, y, w, h, extent, 3 * spacing)
    img = np.full((h, w, 3), 255, dtype=np.uint8)
    has = owner >= 0
    cell = colours[np.where(has, owner, 0)]
    valued = has & (cell[..., 0] >= 0)
    img[valued] = cell[valued].astype(np.uint8)
    # Hollow cells: their outline only.
    hollow = has & ~valued
    edge = np.zeros_like(has)
    edge[:, :-1] |= owner[:, :-1] != owner[:, 1:]
    edge[:-1, :] |= owner[:-1, :] != owner[1:, :]
    img[hollow & edge] = (150, 156, 170)
    ax.imshow(img, extent=extent, origin="upper", interpolation="nearest")
    ax.set_aspect("equal")
    ax.set_title(f"CheckViz — {name} (local T & C, k = {score.params.get('k')})")
    ax.set_xticks([])
    ax.set_yticks([])
    if legend:
        _checkviz_legend(ax, lo)
    return ax


def _checkviz_legend(ax, lo):
    """The two-dimensional scale as an inset beside `ax`."""
    g = np.linspace(lo, 1, 64)
    tt, cc = np.meshgrid(g, g[::-1])
    sq = checkviz_colours(tt.ravel(), cc.ravel(), lo).reshape(64, 64, 3).astype(np.uint8)
    inset = ax.inset_axes([1.04, 0.55, 0.32, 0.4])
    inset.imshow(sq, extent=(lo, 1, lo, 1), origin="upper", aspect="auto")
    inset.set_xlabel("local trustworthiness", fontsize=8)
    inset.set_ylabel("local continuity", fontsize=8)
    inset.tick_params(labelsize=7)
    inset.set_xticks([lo, 1])
    inset.set_yticks([lo, 1])
    inset.set_xticklabels([f"{lo:.2f}", "1"])
    inset.set_yticklabels([f"{lo:.2f}", "1"])
    ax.text(1.04, 0.4, "orange: false neighbours (low T)\npurple: torn neighbourhoods (low C)", transform=ax.transAxes, fontsize=8, va="top")


def reliability_map(views, Y, *, projection=None, q=100, ax=None, colorbar=True):
    """The reliability map of projection `Y`: the original space's kNN edges (from `views`,
    an `Evaluator.views` result) drawn on it, each coloured by its projection rank (kept edges,
    rank <= k, light; torn ones orange to dark red on a log scale), the worst last; with `q`,
    only the worst q % of the edges. Returns the Axes; the edges are ``ax.collections[0]``
    (a LineCollection, in drawing order)."""
    from matplotlib.collections import LineCollection

    name, pv = _views_of(views, projection)
    if views.knn_high is None or pv.rank_low_of_high is None:
        raise ValueError("reliability_map: the views have no kNN lists (k=0)")
    x, y = _xy(Y)
    n, k = views.knn_high.shape
    ranks = pv.rank_low_of_high.ravel()
    order = np.lexsort((np.arange(n * k), ranks))
    keep = n * k if q >= 100 else max(1, math.ceil(n * k * q / 100))
    order = order[n * k - keep :]
    i = order // k
    j = views.knn_high.ravel()[order]
    segs = np.stack([np.column_stack([x[i], y[i]]), np.column_stack([x[j], y[j]])], axis=1)
    t = rank_t(ranks[order], k, n)
    rgb = np.where((t < 0)[:, None], np.asarray(KEPT, np.uint8)[None, :], rank_colours(np.maximum(t, 0)))
    alpha = np.where(t < 0, 0.35, 0.75)
    ax = _axes(ax)
    ax.scatter(x, y, s=2, c="#c9ced9", zorder=0)
    ax.add_collection(LineCollection(segs, colors=np.column_stack([rgb / 255.0, alpha]), linewidths=0.9))
    ax.set_aspect("equal")
    ax.autoscale_view()
    ax.set_xticks([])
    ax.set_yticks([])
    shown = f", the worst {q} %" if q < 100 else ""
    ax.set_title(f"Reliability map — {name} ({keep} of {n * k} {k}-NN edges{shown})")
    if colorbar:
        from matplotlib.cm import ScalarMappable
        from matplotlib.colors import LinearSegmentedColormap, LogNorm

        cmap = LinearSegmentedColormap.from_list("faithful_rank", [tuple(v / 255 for v in s) for s in RANK_STOPS])
        sm = ScalarMappable(norm=LogNorm(k + 1, max(n - 1, k + 2)), cmap=cmap)
        ax.figure.colorbar(sm, ax=ax, label="projection rank of an original neighbour (log)")
    return ax


def shepard(views, *, projection=None, ax=None, colorbar=True):
    """The binned Shepard diagram of `views` (exact counts of every pair i < j): original
    distance across, projection distance up, counts on a log colour scale (viridis; empty bins
    white), with stress and Spearman's rho in the title when the views' scores have them.
    Returns the Axes; the counts are ``ax.images[0]``'s array (transposed, masked where 0)."""
    from matplotlib.colors import LogNorm

    name, pv = _views_of(views, projection)
    s = pv.shepard
    if s is None:
        raise ValueError("shepard: the views have no Shepard diagram (shepard_bins=0)")
    counts = np.asarray(s["counts"], float)
    ax = _axes(ax)
    img = np.ma.masked_equal(counts.T, 0)
    im = ax.imshow(img, origin="lower", extent=(0, s["max_high"], 0, s["max_low"]), aspect="auto",
                   norm=LogNorm(1, max(1.0, counts.max())), cmap="viridis", interpolation="nearest")
    ax.set_xlabel("distance in the original space")
    ax.set_ylabel("distance in the projection")
    scores = {sc.id: sc.values for sc in views.result.projections.get(name, [])}
    bits = [f"{s['pairs']} pairs"]
    if "stress" in scores:
        bits.insert(0, f"stress {scores['stress']['stress']:.4f}")
    if "srho" in scores:
        bits.insert(1, f"Spearman ρ {scores['srho']['spearman_rho']:.4f}")
    ax.set_title(f"Shepard diagram — {name}\n" + " · ".join(bits), fontsize=10)
    if colorbar:
        ax.figure.colorbar(im, ax=ax, label="pairs per bin (log)")
    return ax


def coranking_matrix(views, *, projection=None, ax=None, colorbar=True):
    """The co-ranking matrix of `views` in log bins of K: projection rank r across, original
    rank rho up, both on log axes, coloured by pairs per unit of rank area (log scale; empty
    bins white), the K = k corner dashed. Returns the Axes; the mesh is ``ax.collections[0]``
    (its array: the densities, row = the original rank's bin)."""
    from matplotlib.colors import LogNorm

    name, pv = _views_of(views, projection)
    c = pv.coranking
    if c is None:
        raise ValueError("coranking_matrix: the views have no co-ranking matrix (coranking_per_octave=0)")
    edges = np.asarray(c["edges"], float)
    counts = np.asarray(c["counts"], float)
    widths = np.diff(edges)
    dens = counts / (widths[:, None] * widths[None, :])
    ax = _axes(ax)
    pos = dens[dens > 0]
    mesh = ax.pcolormesh(edges, edges, np.ma.masked_equal(dens, 0), cmap="viridis",
                         norm=LogNorm(pos.min(), pos.max()) if pos.size else None)
    ax.set_xscale("log")
    ax.set_yscale("log")
    k = views.k
    if k:
        ax.plot([1, k + 1, k + 1], [k + 1, k + 1, 1], ls="--", color="#e66101", lw=1.2)
    ax.set_xlabel("rank in the projection, r")
    ax.set_ylabel("rank in the original space, ρ")
    ax.set_title(f"Co-ranking matrix — {name} (AUC of R_NX {c['auc_rnx']:.4f})", fontsize=10)
    if colorbar:
        ax.figure.colorbar(mesh, ax=ax, label="pairs per unit of rank area (log)")
    return ax


def curves(result, *, keys=("rnx",), projection=None, ax=None):
    """The co-ranking curves over K on a log-K axis: from a `Result` with ``coranking`` scores
    (any of their curves: rnx, qnx, lcmc, trustworthiness, continuity, mrre_false,
    mrre_missing), or R_NX from a `Views`' co-ranking matrices. One line per projection and
    key, the page's categorical colours. Returns the Axes (``ax.lines`` in that order)."""
    from .evaluator import _CATEGORICAL

    ax = _axes(ax, (6.4, 4.0))
    series = []
    if hasattr(result, "knn_high"):
        for name, pv in result.projections.items():
            if pv.coranking is not None and (projection is None or name == projection):
                series.append((name, "rnx", np.asarray(pv.coranking["rnx"])))
    else:
        for name, scores in result.projections.items():
            if projection is not None and name != projection:
                continue
            for s in scores:
                for key in keys:
                    if key in (s.curves or {}):
                        series.append((name, key, np.asarray(s.curves[key])))
    if not series:
        raise ValueError("curves: no co-ranking curves (measure 'coranking', or views with coranking_per_octave > 0)")
    names = list(dict.fromkeys(n for n, _, _ in series))
    for name, key, v in series:
        colour = _CATEGORICAL[names.index(name) % len(_CATEGORICAL)]
        ls = "-" if key == "rnx" else "--"
        ax.plot(np.arange(1, len(v) + 1), v, color=colour, ls=ls, lw=1.8, label=f"{name} · {key}")
    ax.set_xscale("log")
    ax.set_xlabel("K (log scale)")
    ax.set_ylabel(", ".join(dict.fromkeys(k for _, k, _ in series)))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return ax


__all__ = ["checkviz", "reliability_map", "shepard", "coranking_matrix", "curves", "checkviz_colours", "rank_colours"]
