"""Retrieval: a live ripgrep scan (``scan``), BM25 (``keyword``), dense vectors
(``vectors``), hybrid fusion (``hybrid.Retriever``) and deep reads (``deep_read``).

Import the submodules directly; this package imports nothing heavy on its own.
"""
