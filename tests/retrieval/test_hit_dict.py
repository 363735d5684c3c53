"""A search hit's JSON form is built field by field (speed); it must stay what
``dataclasses.asdict`` gives: every field, in order, nested values copied."""

from dataclasses import asdict, fields

from opencortex.retrieval.hybrid import SearchHit


def test_a_hits_dict_is_asdict_and_shares_nothing_with_the_hit() -> None:
    hit = SearchHit("id-1", "k", "notes/a.org", 3, ["A", "B"], "B", 0.5, "snippet",
                    {"rrf": {"sparse": [1, 0.2], "dense": (2, 0.7)}, "boost": 1.0}, 7)
    got = hit.to_dict()
    assert got == asdict(hit)
    assert list(got) == [f.name for f in fields(SearchHit)]
    got["why"]["rrf"]["sparse"].append(9)
    got["outline"].append("C")
    assert hit.why["rrf"]["sparse"] == [1, 0.2] and hit.outline == ["A", "B"]
