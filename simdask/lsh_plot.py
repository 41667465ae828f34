"""S-curve plots of LSH settings (matplotlib, the optional extra ``plot``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from simdask.errors import ConfigError
from simdask.kernels.lsh_bands import LshParams, s_curve

__all__ = ["plot_curves"]


def plot_curves(path: str, params: Sequence[LshParams], threshold: float | None = None) -> None:
    """Write a PNG of the candidate probability ``1-(1-s^r)^b`` against Jaccard ``s``
    (fraction) for each setting, with the threshold as a vertical line."""
    try:
        import matplotlib  # optional (plot extra)

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # optional (plot extra)
    except ImportError as e:
        raise ConfigError(
            "--plot needs matplotlib: pip install 'simdask[plot]' (or matplotlib)"
        ) from e
    s = np.linspace(0.0, 1.0, 501)
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    for p in params:
        ax.plot(s, s_curve(s, p.bands, p.rows), label=f"b={p.bands}, r={p.rows}")
    if threshold is not None:
        ax.axvline(threshold, color="grey", linestyle="--", linewidth=1, label=f"t={threshold}")
    ax.set_xlabel("Jaccard similarity s")
    ax.set_ylabel("P(candidate) = 1-(1-s^r)^b")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.01)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
