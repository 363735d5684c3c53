"""``opencortex router train``: train and cache the offline router's classifier ahead of time.

Why: the first worded request would otherwise embed the whole bundled training set (tens of
seconds on a slow machine) before it answers; the quick start runs this once after indexing.
"""

from __future__ import annotations

import click

from .output import emit, fail

__all__ = ["router"]


@click.group()
def router() -> None:
    """The offline intent router."""


@router.command("train")
@click.option("--retrain", is_flag=True,
              help="Train again here even when a shipped or cached classifier matches.")
@click.option("--json", "json_", is_flag=True, help="Machine-readable JSON output.")
def train(retrain: bool, json_: bool) -> None:
    """Build the embedder and train (or load) the router's classifier; cached by the set's hash."""
    from ..embed.base import EmbeddingError
    from ..router.decompose import warm

    try:
        info = warm(retrain=retrain)
    except EmbeddingError as e:
        fail(str(e), json_, "EmbeddingError")
        return
    verb = {"trained now": "trained", "shipped": "shipped with the package (no training needed)",
            "cached": "already cached"}[info["source"]]
    emit(info, json_, lambda: click.echo(
        f"router classifier {verb} ({info['rows']} utterances, "
        f"{info['classifier_seconds']:.1f} s; embedder {info['embedder_seconds']:.1f} s): "
        f"{info['cache']}"))
