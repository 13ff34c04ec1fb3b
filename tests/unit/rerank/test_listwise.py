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
    assert [c["unchanged"] for c in lw.last_calls] == [False, False]


def test_a_reply_that_copies_the_window_order_is_flagged():
    # what the 1.5B answers for nearly every 20-passage window on SciFact
    lw = LLMListwiseReranker(ReplyLLM("[1] > [2] > [3] > [4] > [5]"))
    out = lw.rerank(QUERY, make_ranking())
    assert out.passage_ids == make_ranking().passage_ids
    assert [(c["unchanged"], c["repaired"]) for c in lw.last_calls] == [(True, False)]


class SmallContextLLM(ReplyLLM):
    """A backend with a small context window whose tokens are whitespace-separated words."""

    def __init__(self, n_ctx: int) -> None:
        super().__init__("[1] > [2]")
        self.n_ctx = n_ctx

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def complete(self, messages, *, max_tokens=256, **kw):
        used = sum(self.count_tokens(m.content) + 8 for m in messages)
        assert used + max_tokens <= self.n_ctx, f"prompt of {used} tokens does not fit"
        return super().complete(messages, max_tokens=max_tokens, **kw)


class Wrapper:
    """Stands for the response cache: the backend sits in ``inner``."""

    def __init__(self, inner):
        self.inner, self.model_id = inner, inner.model_id

    def complete(self, messages, **kw):
        return self.inner.complete(messages, **kw)


def test_window_is_cut_to_fit_the_context_behind_a_wrapper():
    long = make_ranking()
    long = type(long)(
        QUERY,
        tuple(
            type(it)(
                type(it.passage)(it.passage_id, it.passage.doc_id, 0, "", "word " * 300),
                it.score,
                it.rank,
            )
            for it in long.items
        ),
        "bm25",
    )
    backend = SmallContextLLM(n_ctx=700)
    lw = LLMListwiseReranker(Wrapper(backend), window=5, step=5, max_words=200)
    out = lw.rerank(QUERY, long)
    (call,) = lw.last_calls
    assert 20 <= call["passage_words"] < 200
    # close to as many words as fit: 10 more words per passage would overflow the window
    bigger = lw._messages(QUERY, [it.passage for it in long.items], call["passage_words"] + 10)
    assert sum(backend.count_tokens(m.content) + 8 for m in bigger) + 38 > 700
    assert len(out.items) == 5


def test_a_window_that_fits_keeps_max_words():
    lw = LLMListwiseReranker(SmallContextLLM(n_ctx=100_000), max_words=120)
    lw.rerank(QUERY, make_ranking())
    assert lw.last_calls[0]["passage_words"] == 120
