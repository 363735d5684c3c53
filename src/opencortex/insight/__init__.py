"""Reports over the memex for the person: the review of a span (review.py), its model
summary citing items (review_summary.py), unlinked notes close in meaning
(links_suggest.py).  They read through memory, retrieval, recall and write, so they sit
above them (they lived in memory/, which made memory import its own callers)."""
