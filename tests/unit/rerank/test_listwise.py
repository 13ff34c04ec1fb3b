from conftest import QUERY, OverlapLLM, make_ranking
from sciera.llm.base import Completion
from sciera.rerank.llm_listwise import LLMListwiseReranker, parse_permutation, windows


def test_parse_clean_permutation():
    assert parse_permutation("[3] > [1] > [2]", 3) == ([2, 0, 1], False)


def test_parse_repairs_missing_repeated_and_out_of_range_ids():
    order, repaired = parse_permutation("[2] > [2] > [9] > [0] > [4]", 4)
    assert order == [1, 3, 0, 2] and repaired


def test_parse_bare_numbers_and_garbage():
    assert parse_permutation("2 > 1", 3) == ([1, 0, 2], True)
    assert parse_permutation("I cannot rank these.", 3) == ([0, 1, 2], True)
    # bracketed ids win over numbers in prose
    assert parse_permutation("Passage 3 is best: [2] > [3] > [1]", 3) == ([1, 2, 0], False)


def test_windows_back_to_front_and_last_window_starts_at_top():
    assert windows(30, 20, 10) == [(10, 30), (0, 20)]
    assert windows(25, 20, 10) == [(5, 25), (0, 15)]
    assert windows(5, 20, 10) == [(0, 5)]
    assert windows(0, 20, 10) == []


class ReplyLLM(OverlapLLM):
    def __init__(self, reply: str) -> None:
        super().__init__()
        self.reply = reply

    def complete(self, messages, **kw):
        self.calls.append(("complete", messages))
        return Completion(text=self.reply)


def test_malformed_replies_never_crash_and_keep_the_order():
    for reply in ["", "[99] > [0]", "{'score': 10}", "[1] > [1] > [1]"]:
        out = LLMListwiseReranker(ReplyLLM(reply)).rerank(QUERY, make_ranking())
        assert out.passage_ids == make_ranking().passage_ids


def test_sliding_window_moves_a_strong_passage_from_the_bottom_to_the_top():
    # d2 (all query words) starts last of 5; windows (2,5), (0,3) with step 2 bubble it up.
    r = make_ranking()
    items = (*r.items[:1], *r.items[2:], r.items[1])
    llm = OverlapLLM()
    lw = LLMListwiseReranker(llm, window=3, step=2)
    out = lw.rerank(QUERY, type(r)(QUERY, items, "bm25"))
    assert out.items[0].passage_id == "d2#0"
    assert [(c["start"], c["end"]) for c in lw.last_calls] == [(2, 5), (0, 3)]
    assert [it.score for it in out.items] == [1.0, 0.8, 0.6, 0.4, 0.2]
