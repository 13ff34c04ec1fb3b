"""Deterministic stand-ins for the rerank unit tests (no models).

``OverlapLLM`` answers every LLM call from word overlap between the question and the
passage block(s) in the prompt: a transparent, hand-checkable relevance signal. It is a
stand-in for the LLM, never for the code under test.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from sciera.llm.base import ChoiceProbs, Completion, JSONResult, Message, ParseFailure
from sciera.types import Passage, Ranking, ScoredPassage

_WORD = re.compile(r"[a-z0-9]+")
_BLOCK = re.compile(r"<passage(?: id=\"(\d+)\")?>\n(.*?)\n</passage>", re.S)
_QUESTION = re.compile(r"(?:Question|Search query|Research question): (.*)")
STOP = {"the", "a", "of", "in", "and", "is", "to", "does", "do", "what", "how", "by"}


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOP}


def overlap(question: str, passage: str) -> float:
    q = words(question)
    return len(q & words(passage)) / len(q) if q else 0.0


def _question(messages: Sequence[Message]) -> str:
    m = _QUESTION.search(messages[-1].content)
    return m.group(1) if m else ""


class OverlapLLM:
    """LLM protocol stand-in. ``json_reply`` overrides complete_json's reply text."""

    model_id = "overlap-stub"

    def __init__(self, json_reply: Callable[[Sequence[Message]], str] | None = None) -> None:
        self.json_reply = json_reply
        self.calls: list[tuple[str, Sequence[Message]]] = []

    def _overlap(self, messages: Sequence[Message]) -> float:
        blocks = _BLOCK.findall(messages[-1].content)
        return overlap(_question(messages), blocks[0][1]) if blocks else 0.0

    def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
    ) -> Completion:
        self.calls.append(("complete", messages))
        content = messages[-1].content
        blocks = _BLOCK.findall(content)
        if "Rank the" in content:  # listwise: sort blocks by overlap
            q = _question(messages)
            order = sorted(blocks, key=lambda b: (-overlap(q, b[1]), int(b[0])))
            text = " > ".join(f"[{b[0]}]" for b in order)
        else:  # summary: first sentence of the passage
            text = blocks[0][1].split(". ")[0].strip().rstrip(".") + "." if blocks else ""
        return Completion(text=text, prompt_tokens=len(content.split()), completion_tokens=5)

    def complete_json(
        self, messages: Sequence[Message], schema: Mapping[str, Any], *, max_tokens: int = 512
    ) -> JSONResult:
        self.calls.append(("json", messages))
        if self.json_reply is not None:
            raw = self.json_reply(messages)
        elif "intent" in schema.get("properties", {}):
            raw = json.dumps(
                {
                    "topic": "biology",
                    "entity_type": "protein",
                    "intent": "mechanism",
                    "expected_answer_type": "mechanistic explanation",
                }
            )
        else:
            g = round(10 * self._overlap(messages))
            raw = json.dumps({"grade": g, "reason": f"overlap grade {g}"})
        completion = Completion(text=raw, prompt_tokens=10, completion_tokens=len(raw.split()))
        try:
            value = json.loads(raw)
        except ValueError as exc:
            return JSONResult(None, completion, ParseFailure(raw, str(exc)))
        if not isinstance(value, dict):
            return JSONResult(None, completion, ParseFailure(raw, "not an object"))
        return JSONResult(value, completion)

    def choice_logprobs(self, messages: Sequence[Message], choices: Sequence[str]) -> ChoiceProbs:
        """All mass on round(10 * overlap) for grades; P(yes) = overlap for yes/no."""
        self.calls.append(("choice", messages))
        x = self._overlap(messages)
        if set(choices) == {"yes", "no"}:
            probs = {"yes": x, "no": 1.0 - x}
        else:
            g = str(round(10 * x))
            probs = {c: (1.0 if c == g else 0.0) for c in choices}
        return ChoiceProbs(probs=probs, prompt_tokens=len(messages[-1].content.split()))


class HashEmbedder:
    """Bag-of-words embedder stand-in: word-hash counts, L2-normalized."""

    dim = 64

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in words(t):
                out[i, sum(map(ord, w)) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)


QUERY = "vitamin d deficiency increases fracture risk"
TEXTS = [
    ("d1", "Statins and muscle pain", "Statin therapy causes myalgia in some patients."),
    ("d2", "Vitamin D and fractures", "Vitamin D deficiency increases fracture risk in elderly."),
    ("d3", "Bone health", "Calcium intake and vitamin D levels were measured."),
    ("d4", "Unrelated", "Galaxies rotate faster than expected."),
    ("d5", "Fracture risk", "Deficiency of vitamin D and the risk of hip fracture."),
]


def make_ranking(n: int = len(TEXTS), stage: str = "bm25") -> Ranking:
    items = tuple(
        ScoredPassage(
            Passage(f"{d}#0", d, 0, title, text),
            score=10.0 - i,
            rank=i + 1,
            provenance={"bm25": {"score": 10.0 - i, "rank": i + 1, "terms": ["x"]}},
        )
        for i, (d, title, text) in enumerate(TEXTS[:n])
    )
    return Ranking(QUERY, items, stage)


@pytest.fixture
def llm() -> OverlapLLM:
    return OverlapLLM()


@pytest.fixture
def ranking() -> Ranking:
    return make_ranking()
