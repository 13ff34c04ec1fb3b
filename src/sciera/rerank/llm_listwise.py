"""RankGPT-style listwise reranking with a sliding window.

The LLM sees up to ``window`` passages labelled [1]..[m] and writes a permutation
("[2] > [1] > [3]"). Windows slide from the back of the list to the front with
``step`` (default 20 / 10), so strong passages bubble up; the last window always
starts at the top. Replies are repaired, never trusted: unknown or repeated ids are
dropped and missing ones appended in their current order; a reply with no usable id
leaves the window unchanged.

Scores are positional: the passage at final rank r of n gets (n - r + 1) / n.

A window must fit the model's context: when the backend tells its window and counts
tokens (llama.cpp), passages are cut to fewer than ``max_words`` words until the prompt
plus the reply fits, and the words used are recorded per call.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

from sciera.llm.base import context_limits
from sciera.rerank.base import RerankerBase, rescored, truncate_words
from sciera.types import Passage, Ranking

if TYPE_CHECKING:
    from sciera.llm.base import LLM, Message
    from sciera.settings import Settings

PROMPT = "llm_listwise"
_CHAT_OVERHEAD = 8  # chat-template tokens around each message (Qwen: 5), with slack
_MIN_WORDS = 20
_ID = re.compile(r"\[\s*(\d+)\s*\]|\b(\d+)\b")


def parse_permutation(text: str, m: int) -> tuple[list[int], bool]:
    """0-based order of ``m`` items from a reply like "[3] > [1] > [2]".

    Returns (order, repaired): ``repaired`` is True when ids were missing, repeated or
    out of range. Bracketed ids are preferred; bare numbers are used only when the reply
    has no bracketed id.
    """
    bracketed = [int(a) for a, _ in _ID.findall(text) if a]
    raw = bracketed or [int(b) for _, b in _ID.findall(text) if b]
    seen: set[int] = set()
    order: list[int] = []
    repaired = False
    for k in raw:
        if 1 <= k <= m and (k - 1) not in seen:
            seen.add(k - 1)
            order.append(k - 1)
        else:
            repaired = True
    missing = [i for i in range(m) if i not in seen]
    if missing:
        repaired = True
    return order + missing, repaired


def windows(n: int, window: int, step: int) -> list[tuple[int, int]]:
    """[start, end) windows from the back to the front; the last starts at 0."""
    if n == 0:
        return []
    out = []
    end = n
    while True:
        start = max(0, end - window)
        out.append((start, end))
        if start == 0:
            return out
        end -= step


class LLMListwiseReranker(RerankerBase):
    name = "llm_listwise"

    def __init__(
        self,
        llm: LLM,
        *,
        window: int = 20,
        step: int = 10,
        max_words: int = 120,
        max_tokens: int | None = None,
    ) -> None:
        if not 0 < step <= window:
            raise ValueError("listwise: need 0 < step <= window")
        self.llm, self.window, self.step, self.max_words = llm, window, step, max_words
        self.max_tokens = max_tokens
        self.last_calls: list[dict[str, Any]] = []

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> LLMListwiseReranker:
        llm = kwargs.pop("llm", None)
        if llm is None:
            from sciera.llm.registry import make_llm

            llm = make_llm(settings)
        return cls(llm, **kwargs)

    def _messages(self, query: str, passages: list[Passage], words: int) -> list[Message]:
        from sciera.llm.prompting import delimit_passages, load_prompt

        blocks = delimit_passages([truncate_words(p.contents, words) for p in passages])
        return load_prompt(PROMPT).render(query=query, num=len(passages), passages=blocks)

    def _fitted(
        self, query: str, passages: list[Passage], reply_tokens: int
    ) -> tuple[list[Message], int]:
        """The prompt with passages cut so that prompt + reply fit the context window."""
        words = self.max_words
        messages = self._messages(query, passages, words)
        limits = context_limits(self.llm)
        if limits is None:
            return messages, words
        n_ctx, count = limits

        def size(msgs: list[Message]) -> int:
            return sum(count(m.content) + _CHAT_OVERHEAD for m in msgs)

        room = n_ctx - reply_tokens
        used = size(messages)
        if used <= room:
            return messages, words
        fixed = size(self._messages(query, passages, 0))  # everything but the passage words
        while used > room and words > _MIN_WORDS:
            per_word = max(used - fixed, 1) / words
            words = max(_MIN_WORDS, min(words - 1, int((room - fixed) / per_word)))
            messages = self._messages(query, passages, words)
            used = size(messages)
        return messages, words

    def _permute(self, query: str, passages: list[Passage]) -> tuple[list[int], dict[str, Any]]:
        m = len(passages)
        reply_tokens = self.max_tokens or 6 * m + 8
        messages, words = self._fitted(query, passages, reply_tokens)
        t0 = time.perf_counter()
        reply = self.llm.complete(messages, max_tokens=reply_tokens)
        order, repaired = parse_permutation(reply.text, m)
        info = {
            "size": m,
            "passage_words": words,
            "reply": reply.text,
            "repaired": repaired,
            "unchanged": order == list(range(m)),  # the window's order copied back
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "seconds": time.perf_counter() - t0,
        }
        return order, info

    def rerank(self, query: str, ranking: Ranking) -> Ranking:
        current = list(range(len(ranking.items)))  # current order as input indices
        self.last_calls = []
        if len(current) > 1:
            for start, end in windows(len(current), self.window, self.step):
                chunk = current[start:end]
                order, info = self._permute(query, [ranking.items[i].passage for i in chunk])
                current[start:end] = [chunk[j] for j in order]
                self.last_calls.append({"start": start, "end": end, **info})
        n = len(current)
        scores = [0.0] * n
        details: list[dict[str, Any]] = [{} for _ in range(n)]
        for pos, i in enumerate(current):
            scores[i] = (n - pos) / n
            details[i] = {"score": scores[i], "position": pos + 1, "windows": len(self.last_calls)}
        return rescored(ranking, scores, self.name, details, query=query)

    def score(self, query: str, passage: Passage) -> float:
        """A listwise model ranks lists, not single passages: a list of one scores 1.0."""
        return 1.0
