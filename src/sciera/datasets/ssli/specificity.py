"""Does a question single out its source? The ``underspecified`` rule and ``specificity.json``.

DeepEra's question prompt (Figure 10) asks for *self-contained* questions. The
``self_reference`` rule catches "this study" and "the authors"; it does not catch a
question that names no subject at all: "What was the result of the meta-analysis?",
"What is the significance of the findings?", "What is the purpose of the model?". Any
of dozens of abstracts answers those, so no retriever or reranker can put *the* source
first: on the first SciFact SSLI evaluation set, every system ranked the source first
for none of the 11 such questions (of 96), in both settings, which caps hit@1 at 0.885.

The rule is lexical and corpus-grounded. A question's *topic words* are its content
stems (:func:`~sciera.datasets.ssli.validate.content_words`) minus those that shape a
question without naming a subject ("role", "effect", "purpose", "method", "result",
"significance" ... and the reporting words the answer rules already set apart). The
question is ``underspecified`` when it has no topic word, or when more than
``max(min_docs, max_share * N)`` of the corpus's ``N`` documents contain every topic word
(defaults 5 and 0.5%: 26 of SciFact's 5,183 abstracts). "What was the result of the
meta-analysis?" keeps one topic word that 92 SciFact abstracts contain; "What is the
effect of aspirin on colorectal adenomas?" keeps three that 3 contain.

:class:`TopicIndex` holds, per stem, the documents containing it (built once per corpus:
a few seconds for SciFact, linear in the corpus's size). ``specificity.json`` next to a
set's ``instances.jsonl`` records each question's topic words, document count and
verdict, so ``sciera eval run`` can keep the specific questions only
(``dataset.specific_only``) without the corpus.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from sciera.datasets.ssli.io import question_of, set_folder
from sciera.datasets.ssli.validate import (
    Rejection,
    _reporting_stems,
    _stemmer,
    content_words,
)
from sciera.errors import InputError

SPECIFICITY_FILE = "specificity.json"
MAX_TOPIC_SHARE = 0.005
MIN_TOPIC_DOCS = 5

# words that shape a question ("What is the role of X in Y?") without naming its subject
_SCAFFOLD_TEXT = """role roles effect effects purpose purposes method methods result results
    significance mechanism mechanisms relationship relationships impact impacts function
    functions characteristic characteristics key main primary nature current understanding
    various type types new novel specific overall major reason reasons way ways importance
    contribution contributions implication implications approach approaches outcome
    outcomes finding findings conclusion conclusions goal goals objective objectives aim"""


@lru_cache(maxsize=1)
def _scaffold_stems() -> frozenset[str]:
    return frozenset(_stemmer().stemWords(_SCAFFOLD_TEXT.split())) | _reporting_stems()


def topic_words(question: str) -> list[str]:
    """The question's distinct content stems that name its subject, in order."""
    scaffold = _scaffold_stems()
    return [w for w in dict.fromkeys(content_words(question)) if w not in scaffold]


class TopicIndex:
    """Which documents contain each content stem (document-level, titles included)."""

    def __init__(self, documents: Iterable[tuple[str, str]]) -> None:
        """``documents``: (doc_id, text) pairs; texts of one doc_id are pooled."""
        ids: dict[str, int] = {}
        postings: dict[str, set[int]] = {}
        for doc_id, text in documents:
            n = ids.setdefault(doc_id, len(ids))
            for stem in set(content_words(text)):
                postings.setdefault(stem, set()).add(n)
        self.documents = len(ids)
        self._postings = postings

    @classmethod
    def from_store(cls, store: Any) -> TopicIndex:
        """Every passage of a :class:`~sciera.corpus.store.PassageStore`, by document."""
        return cls((p.doc_id, p.contents) for p in store.iter_passages())

    def matching(self, words: Iterable[str]) -> int:
        """How many documents contain every stem of ``words`` (all, for no words)."""
        found: set[int] | None = None
        for word in words:
            docs = self._postings.get(word, set())
            found = set(docs) if found is None else found & docs
            if not found:
                return 0
        return self.documents if found is None else len(found)


@dataclass(frozen=True, slots=True)
class Specificity:
    words: tuple[str, ...]
    documents: int  # documents containing every topic word
    limit: float  # more than this many documents: underspecified

    @property
    def specific(self) -> bool:
        return bool(self.words) and self.documents <= self.limit

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic_words": list(self.words),
            "documents": self.documents,
            "specific": self.specific,
        }


def specificity(
    question: str,
    index: TopicIndex,
    *,
    max_share: float = MAX_TOPIC_SHARE,
    min_docs: int = MIN_TOPIC_DOCS,
) -> Specificity:
    words = tuple(topic_words(question))
    limit = topic_limit(index, max_share, min_docs)
    return Specificity(words, index.matching(words) if words else index.documents, limit)


def topic_limit(index: TopicIndex, max_share: float, min_docs: int) -> float:
    """More documents than this containing every topic word: underspecified."""
    return max(float(min_docs), max_share * index.documents)


def check_specific(
    question: str,
    index: TopicIndex,
    *,
    max_share: float = MAX_TOPIC_SHARE,
    min_docs: int = MIN_TOPIC_DOCS,
) -> Rejection | None:
    """``underspecified``: no topic word, or too many documents contain them all."""
    spec = specificity(question, index, max_share=max_share, min_docs=min_docs)
    if spec.specific:
        return None
    if not spec.words:
        return Rejection("underspecified", "no word names the question's subject")
    return Rejection(
        "underspecified",
        f"{spec.documents} of {index.documents} documents contain every topic word "
        f"({' '.join(spec.words)}) > {spec.limit:g}",
    )


def set_specificity(
    questions: Mapping[str, str],
    index: TopicIndex,
    *,
    corpus: str,
    max_share: float = MAX_TOPIC_SHARE,
    min_docs: int = MIN_TOPIC_DOCS,
) -> dict[str, Any]:
    """``specificity.json``'s content for ``questions`` (question id -> text)."""
    rows = {
        qid: {
            "question": text,
            **specificity(text, index, max_share=max_share, min_docs=min_docs).to_dict(),
        }
        for qid, text in questions.items()
    }
    return {
        "corpus": corpus,
        "corpus_documents": index.documents,
        "max_share": max_share,
        "min_docs": min_docs,
        "limit": topic_limit(index, max_share, min_docs),
        "specific": sum(r["specific"] for r in rows.values()),
        "underspecified": sum(not r["specific"] for r in rows.values()),
        "questions": rows,
    }


def write_specificity(data: dict[str, Any], set_dir: str | Path) -> Path:
    path = Path(set_dir) / SPECIFICITY_FILE
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def specific_questions(set_path: str | Path) -> set[str]:
    """The question ids ``specificity.json`` of the set at ``set_path`` (its folder or its
    instances file) calls specific; an error naming the command that writes it if absent."""
    folder = set_folder(set_path)
    file = folder / SPECIFICITY_FILE
    if not file.exists():
        raise InputError(
            str(file),
            None,
            "specificity",
            "missing: run `sciera dataset check "
            f"{folder} --corpus CORPUS` (the corpus the set was built from)",
        )
    try:
        rows = json.loads(file.read_text("utf-8"))["questions"]
        return {qid for qid, row in rows.items() if row["specific"]}
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(str(file), None, "questions", f"not a specificity file ({exc})") from exc


def question_texts(instances: Iterable[Any]) -> dict[str, str]:
    """Question id (the instance id without its ``/setting``) -> question, in order."""
    out: dict[str, str] = {}
    for inst in instances:
        out.setdefault(question_of(inst.id, inst.setting), inst.question)
    return out


def check_set(
    instances: Iterable[Any],
    index: TopicIndex,
    set_dir: str | Path,
    *,
    corpus: str,
    max_share: float = MAX_TOPIC_SHARE,
    min_docs: int = MIN_TOPIC_DOCS,
) -> dict[str, Any]:
    """Judge every question of a set against ``index`` and write ``specificity.json``."""
    data = set_specificity(
        question_texts(instances), index, corpus=corpus, max_share=max_share, min_docs=min_docs
    )
    write_specificity(data, set_dir)
    return data
