"""Synthetic training queries: sources respect the split guard, the consistency filter
keeps only queries whose abstract the first stage finds, a rerun asks the LLM nothing new,
and a bad reply is dropped, never turned into a training pair (scripted LLM, stub store
and retriever)."""

from __future__ import annotations

import json

from fakes import ScriptedLLM
from sciera.train import synthetic
from sciera.train.splits import SplitGuard
from sciera.types import Passage, Ranking, ScoredPassage


class _Store:
    def __init__(self, docs: dict[str, str]) -> None:
        self.docs = docs

    def doc_ids(self):
        return sorted(self.docs)

    def find_passages(self, ids):
        return {
            i: Passage(i, i.split("#")[0], 0, "", self.docs[i.split("#")[0]])
            for i in ids
            if i.split("#")[0] in self.docs
        }


class _Retriever:
    """Ranks documents by how many query words their text holds."""

    def __init__(self, store: _Store) -> None:
        self.store = store

    def search(self, query: str, k: int) -> Ranking:
        words = set(query.lower().split())
        scored = sorted(
            self.store.docs.items(), key=lambda kv: (-len(words & set(kv[1].split())), kv[0])
        )[:k]
        items = tuple(
            ScoredPassage(Passage(f"{d}#0", d, 0, "", t), float(k - r), r + 1)
            for r, (d, t) in enumerate(scored)
        )
        return Ranking(query, items, "stub")


DOCS = {
    "d1": "vitamin d supplementation lowers fracture risk in older women",
    "d2": "statins reduce cardiovascular events in diabetic adults",
    "d3": "galaxy rotation curves imply dark matter halos",
    "d4": "gut microbiota composition shifts after antibiotic exposure",
}


def _llm() -> ScriptedLLM:
    return (
        ScriptedLLM()
        .on("vitamin d", {"query": "Vitamin D supplementation lowers fracture risk in women."})
        .on("statins", {"query": "galaxy rotation curves imply dark matter"})  # off target
        .on("gut microbiota", {"query": "This study shows a shift."})  # a meta reference
        .on("galaxy", "no json at all")
    )


def test_pick_sources_leaves_out_forbidden_and_judged_abstracts():
    store = _Store(DOCS)
    guard = SplitGuard(doc_ids={"d3"}, judged_docs={"d2"})
    picked = synthetic.pick_sources(store, guard.allowed_docs, {"d4"} | guard.judged_docs, 10, 0)
    assert picked == ["d1#0"]
    assert synthetic.pick_sources(store, guard.allowed_docs, set(), 10, 0) != []


def test_consistency_filter_and_resumable_cache(tmp_path):
    store = _Store(DOCS)
    cache = tmp_path / "synthetic.jsonl"
    llm = _llm()
    made = synthetic.generate(
        llm, store, ["d1#0", "d2#0", "d3#0", "d4#0"], _Retriever(store), cache=cache, keep_top=1
    )
    by = {s.doc_id: s for s in made}
    assert by["d1"].kept and by["d1"].rank == 1
    assert not by["d2"].kept and by["d2"].rank is None  # found d3 instead: filtered out
    assert "d3" not in by and "d4" not in by  # unparseable / meta reply: no query at all
    queries, qrels = synthetic.as_training(made)
    assert list(qrels.values()) == [{"d1": 1}] and next(iter(queries.values())).startswith(
        "Vitamin"
    )
    lines = [json.loads(x) for x in cache.read_text().splitlines()]
    assert len(lines) == 4 and {x["passage_id"] for x in lines} == {"d1#0", "d2#0", "d3#0", "d4#0"}
    # rerun: every passage is in the cache, the LLM is not asked again
    again = _llm()
    redo = synthetic.generate(
        again, store, ["d1#0", "d2#0", "d3#0", "d4#0"], _Retriever(store), cache=cache, keep_top=1
    )
    assert again.calls == [] and redo == made
    # the prompt delimits the passage as data
    assert "<passage" in llm.calls[0].prompt


def test_clean_query():
    assert (
        synthetic.clean_query('  "Aspirin lowers   stroke risk."  ')
        == "Aspirin lowers stroke risk."
    )
    assert synthetic.clean_query("too short") is None
    assert synthetic.clean_query("The passage says aspirin works well") is None


def test_styles_share_a_cache_and_ask_for_their_own_kind_of_query(tmp_path):
    store = _Store(DOCS)
    cache = tmp_path / "synthetic.jsonl"
    llm = (
        ScriptedLLM()
        .on("answers with yes or no", {"query": "Does vitamin D lower fracture risk in women?"})
        .on("one question", {"query": "What lowers fracture risk in older women?"})
    )
    asked = synthetic.generate(
        llm, store, ["d1#0"], _Retriever(store), cache=cache, style="question", keep_top=1
    )
    yesno = synthetic.generate(
        llm, store, ["d1#0"], _Retriever(store), cache=cache, style="yesno", keep_top=1
    )
    assert [s.text for s in asked] == ["What lowers fracture risk in older women?"]
    assert [s.text for s in yesno] == ["Does vitamin D lower fracture risk in women?"]
    assert "answers with yes or no" in llm.calls[1].prompt
    assert "write one question" in llm.calls[0].prompt
    keys = {json.loads(x)["key"] for x in cache.read_text().splitlines()}
    assert len(keys) == 2  # one record per passage and style, in the same file


def test_a_yes_no_query_must_be_a_yes_no_question():
    assert synthetic.clean_query("Does aspirin lower stroke risk?", "yesno")
    assert synthetic.clean_query("Is serum vitamin D linked to falls?", "yesno")
    assert synthetic.clean_query("What lowers stroke risk in adults?", "yesno") is None
    assert synthetic.clean_query("Does aspirin lower stroke risk.", "yesno") is None
    assert synthetic.clean_query("What lowers stroke risk in adults?", "question")
