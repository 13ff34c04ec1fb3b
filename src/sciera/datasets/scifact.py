"""SciFact-format claims (``claims_<split>.jsonl``) as an experiment dataset.

    data = load_dataset("scifact", "../shared/data/scifact", split="train")

``path`` is a folder holding ``claims_<split>.jsonl`` (``split`` defaults to ``train``) or
a claims file itself. Each claim is a question (its id the claim id, its text the claim)
with:

- ``qrels``: its cited abstracts (``cited_doc_ids``, grade 1), judged per document as
  BEIR's SciFact qrels are (an abstract cited for a NOT ENOUGH INFO claim included);
- ``claims``: its gold verification (:class:`~sciera.eval.metrics.scifact.GoldClaim`:
  per evidence abstract a label and rationale sets), scored by the ``verification``
  metrics;
- ``candidates``: the oracle setting's pool, its cited abstracts, cut into passages
  exactly as ``sciera ingest`` cuts ``corpus_sentences.jsonl`` (same ids, same texts), and
  ``sentences``: those abstracts' sentence lists, which the rationale indices point into;
- ``question_types``: ``yesno`` for every claim, so the verify stage decides it whatever its
  wording, as ``sciera verify`` runs claims.

Candidates and sentences come from ``corpus_sentences.jsonl`` beside the claims file; without
it the dataset has no pool (the open setting only, retrieving from an ingested corpus). A
claim citing an abstract the corpus lacks, or a rationale index past its abstract's end, is
an :class:`~sciera.errors.InputError` naming file, claim and field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sciera.corpus.chunker import DEFAULT_MAX_WORDS, chunk_with_sentences
from sciera.corpus.readers.scifact_sentences import ScifactSentencesReader
from sciera.datasets.claims import GoldClaim, read_gold
from sciera.datasets.loaders import EvalDataset
from sciera.errors import InputError, ScieraError
from sciera.types import Passage

SENTENCES_FILE = "corpus_sentences.jsonl"


def claims_file(path: Path, split: str | None) -> Path:
    """The claims file ``path`` names: ``path/claims_<split>.jsonl`` for a folder."""
    path = Path(path)
    if path.is_dir():
        file = path / f"claims_{split or 'train'}.jsonl"
        if not file.is_file():
            raise ScieraError(f"{file}: no such file (SciFact claims, split {split or 'train'!r})")
        return file
    if not path.is_file():
        raise ScieraError(f"{path}: no such file or folder")
    if split is not None:
        raise ScieraError(f"{path}: split {split!r} applies to a folder of claims files")
    return path


@dataclass(frozen=True, slots=True)
class Abstract:
    """One abstract of a sentence-split corpus: its passages and its sentence list."""

    title: str
    passages: tuple[Passage, ...]
    sentences: tuple[str, ...]


def read_abstracts(
    file: Path, doc_ids: set[str], max_words: int = DEFAULT_MAX_WORDS
) -> dict[str, Abstract]:
    """The abstracts of ``doc_ids`` in a sentence-split corpus file, cut as ingest cuts
    them."""
    reader = ScifactSentencesReader()
    out: dict[str, Abstract] = {}
    for record_no, raw in reader.records(file):
        doc, spans = reader.parse_with_sentences(file, record_no, raw)
        if doc.doc_id in doc_ids:
            passages, sentences = chunk_with_sentences(doc, max_words, spans)
            out[doc.doc_id] = Abstract(doc.title, tuple(passages), tuple(s.text for s in sentences))
    return out


def _check_rationales(source: str, claim: GoldClaim, abstracts: dict[str, Abstract]) -> None:
    for doc, gold in claim.evidence.items():
        n = len(abstracts[doc].sentences)
        for r in gold.rationales:
            if max(r) >= n:
                raise InputError(
                    source,
                    f"claim {claim.id}",
                    f"evidence.{doc}.sentences",
                    f"sentence {max(r)} is past the end of the abstract ({n} sentences)",
                )


def load_scifact(path: Path, *, split: str | None = None) -> EvalDataset:
    """Claims of a SciFact claims file (see the module docstring)."""
    file = claims_file(path, split)
    claims = read_gold(file)
    queries, qrels, gold = {}, {}, {}
    for c in claims:
        if not c.claim.strip():
            raise InputError(str(file), f"claim {c.id}", "claim", "missing or empty")
        if not c.cited_doc_ids:
            raise InputError(str(file), f"claim {c.id}", "cited_doc_ids", "empty")
        uncited = sorted(set(c.evidence) - set(c.cited_doc_ids))
        if uncited:
            raise InputError(
                str(file), f"claim {c.id}", "evidence", f"abstracts {uncited} are not cited"
            )
        queries[c.id] = c.claim
        qrels[c.id] = dict.fromkeys(c.cited_doc_ids, 1)
        gold[c.id] = c
    corpus = file.parent / SENTENCES_FILE
    candidates: dict[str, tuple[Passage, ...]] = {}
    sentences: dict[str, dict[str, tuple[str, tuple[str, ...]]]] = {}
    if corpus.is_file():
        abstracts = read_abstracts(corpus, {d for c in claims for d in c.cited_doc_ids})
        for c in claims:
            missing = [d for d in c.cited_doc_ids if d not in abstracts]
            if missing:
                raise InputError(
                    str(file), f"claim {c.id}", "cited_doc_ids", f"{missing[0]} is not in {corpus}"
                )
            _check_rationales(str(file), c, abstracts)
            candidates[c.id] = tuple(p for d in c.cited_doc_ids for p in abstracts[d].passages)
            sentences[c.id] = {
                d: (abstracts[d].title, abstracts[d].sentences) for d in c.cited_doc_ids
            }
    return EvalDataset(
        name=f"scifact/{file.stem}",
        unit="document",
        queries=queries,
        qrels=qrels,
        candidates=candidates,
        claims=gold,
        sentences=sentences,
        question_types=dict.fromkeys(queries, "yesno"),
    )
