# Type stubs of faithful_dr.sklearn (the scikit-learn drop-ins).
import numpy.typing as npt

def trustworthiness(
    X: npt.ArrayLike, X_embedded: npt.ArrayLike, *, n_neighbors: int = 5, metric: str = "euclidean"
) -> float: ...
def continuity(
    X: npt.ArrayLike, X_embedded: npt.ArrayLike, *, n_neighbors: int = 5, metric: str = "euclidean"
) -> float: ...
