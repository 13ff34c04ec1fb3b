"""The dataset registry: a type name (``"beir"``, ``"ssli"``, ``"pubmedqa"``, ``"bioasq"``,
``"scifact"``, ``"nfcorpus"``, ``"fulltext"``) -> loader.

Every loader returns one :class:`EvalDataset`, the form the experiment runner reads:

- ``queries`` and ``qrels`` always; qrels are per *document* for BEIR collections
  (``unit="document"``: passage rankings are scored through Max-P) and per
  *candidate passage* for SSLI and PubMedQA (``unit="passage"``);
- ``candidates``: a fixed candidate pool per question (SSLI, PubMedQA), used by the
  ``candidates`` first stage instead of searching a corpus;
- ``answers``: reference answers for answer metrics and judges;
- ``labels``: gold exact-answer labels for label metrics (``macro_f1``): PubMedQA's
  ``final_decision`` (yes/no/maybe), BioASQ's yes/no ``exact_answer``; SSLI, BEIR and
  SciFact have none;
- ``distractors`` and ``settings`` (``"base"`` / ``"ssli"``, or ``"all"``);
- ``claims``: gold claim verification for the SciFact metrics (``verification`` kind,
  :mod:`sciera.eval.metrics.scifact`): SciFact claims only;
- ``sentences``: per question, the sentence lists of its pool's documents
  (``{qid: {doc_id: (title, (sentence, ...))}}``, the shape of
  :meth:`sciera.corpus.PassageStore.sentences`), where verification reads rationale
  sentences without a corpus: SciFact's own sentences for its oracle abstracts, each
  context or snippet split on its own for PubMedQA and BioASQ.

A SciFact dataset is one claims file for both settings: a pipeline whose retriever is
``candidates`` reads the gold (cited) abstracts, the oracle setting; any other retriever
searches the corpus, the open setting. Likewise PubMedQA and BioASQ: ``candidates`` is the
reasoning setting (contexts or snippets given), a retriever the retrieval setting.

``load_dataset(type, path, split=..., limit=..., seed=...)`` also draws a seeded
subset: ``limit`` questions sampled with ``random.Random(seed)`` from the sorted ids. A
question asked in several settings (SSLI's ``Q/base`` and ``Q/ssli``) counts once and keeps
all its settings, so a limited SSLI set stays paired.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from sciera.datasets.ssli.io import question_of
from sciera.errors import ScieraError
from sciera.types import Passage, QAInstance, document_of

if TYPE_CHECKING:
    from sciera.datasets.claims import GoldClaim

Unit = Literal["document", "passage"]
DocSentences = Mapping[str, tuple[str, tuple[str, ...]]]
"""``{doc_id: (title, (sentence, ...))}``: rationale index ``i`` of a document is its
``sentences[i]``."""


@dataclass(frozen=True, slots=True)
class EvalDataset:
    """Questions with their judgments (and, where the format has them, answers, labels
    and pools)."""

    name: str
    unit: Unit
    queries: Mapping[str, str]
    qrels: Mapping[str, Mapping[str, int]]
    answers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    candidates: Mapping[str, tuple[Passage, ...]] = field(default_factory=dict)
    distractors: Mapping[str, frozenset[str]] = field(default_factory=dict)
    settings: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    claims: Mapping[str, GoldClaim] = field(default_factory=dict)
    sentences: Mapping[str, DocSentences] = field(default_factory=dict)
    question_types: Mapping[str, str] = field(default_factory=dict)
    """The answer type the format gives a question (``"yesno"`` for BioASQ's yes/no
    questions and PubMedQA's): the runner asks for it unless a pipeline's
    ``generator_params`` name one, so a yes/no question is verified and decided whatever its
    wording (type detection from the text alone reads "A short stay: is it effective?" as
    an open question)."""

    yesno_answers: tuple[str, ...] = ()
    """The answers the format's yes/no questions can have. ``("yes", "no")`` (BioASQ: no
    "maybe") makes the runner ask generators for yes or no only (``answer.allow_maybe``
    off) unless the experiment's settings name ``allow_maybe``; empty: the settings
    decide."""

    @property
    def qids(self) -> list[str]:
        return list(self.queries)

    @property
    def has_candidates(self) -> bool:
        return bool(self.candidates)

    def setting(self, qid: str) -> str:
        return self.settings.get(qid, "all")

    def input_key(self, qid: str) -> str:
        """A digest of everything a pipeline reads or is scored on for ``qid``: the
        question, its judgments, answers, label, distractors, pool (ids and texts) and gold
        claim verification."""
        spec = {
            "query": self.queries[qid],
            "qrels": sorted(self.qrels.get(qid, {}).items()),
            "answers": list(self.answers.get(qid, ())),
            "label": self.labels.get(qid),
            "distractors": sorted(self.distractors.get(qid, ())),
            "pool": [[p.passage_id, p.title, p.text] for p in self.candidates.get(qid, ())],
        }
        # only where present, so the digests of datasets without claims stay as they were;
        # sentences are left out: they are the pool's text cut at sentence boundaries
        if qid in self.claims:
            gold = self.claims[qid]
            spec["claim"] = sorted(
                [doc, g.label, sorted(sorted(r) for r in g.rationales)]
                for doc, g in gold.evidence.items()
            )
        canonical = json.dumps(spec, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    def at_documents(self) -> EvalDataset:
        """The same questions judged per document: a passage judgment counts for its
        document (``"d#3"`` -> ``"d"``, the highest grade wins), as Max-P maps rankings.
        For a corpus chunked differently from the dataset's passages (PubMedQA's contexts
        against an ingested abstract), only the document ids agree."""
        if self.unit == "document":
            return self
        qrels: dict[str, dict[str, int]] = {}
        for qid, judged in self.qrels.items():
            docs = qrels.setdefault(qid, {})
            for pid, grade in judged.items():
                doc = document_of(pid)
                docs[doc] = max(grade, docs.get(doc, grade))
        return replace(self, unit="document", qrels=qrels)

    def subset(self, qids: list[str]) -> EvalDataset:
        keep = set(qids)

        def pick(m: Mapping) -> dict:
            return {q: v for q, v in m.items() if q in keep}

        return replace(
            self,
            queries={q: self.queries[q] for q in qids},
            qrels=pick(self.qrels),
            answers=pick(self.answers),
            candidates=pick(self.candidates),
            distractors=pick(self.distractors),
            settings=pick(self.settings),
            labels=pick(self.labels),
            claims=pick(self.claims),
            sentences=pick(self.sentences),
            question_types=pick(self.question_types),
        )


def from_instances(name: str, instances: list[QAInstance]) -> EvalDataset:
    """An :class:`EvalDataset` over QAInstances (SSLI format, Figure 8 of DeepEra)."""
    queries, qrels, answers, cands, distractors, settings = {}, {}, {}, {}, {}, {}
    for inst in instances:
        queries[inst.id] = inst.question
        qrels[inst.id] = {pid: 1 for pid in inst.gold_passage_ids}
        answers[inst.id] = (inst.answer,) if inst.answer else ()
        cands[inst.id] = tuple(
            Passage(c.passage_id, document_of(c.passage_id), i, "", c.text)
            for i, c in enumerate(inst.candidates)
        )
        distractors[inst.id] = frozenset(c.passage_id for c in inst.candidates if c.is_distractor)
        settings[inst.id] = inst.setting
    return EvalDataset(name, "passage", queries, qrels, answers, cands, distractors, settings)


def load_ssli(path: Path, *, split: str | None = None) -> EvalDataset:
    """An SSLI ``instances.jsonl`` (or its build folder, read by :mod:`sciera.datasets.ssli.io`);
    ``split`` keeps one setting (``base`` / ``ssli``), None keeps both."""
    from sciera.datasets.ssli.io import load_ssli as read_ssli

    instances = read_ssli(path, setting=split)
    return from_instances(Path(path).stem, instances)


def pool_sentences(pool: Sequence[Passage]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """The sentence lists of a candidate pool's documents when the format gives none: each
    passage split on its own (:func:`sciera.corpus.chunker.passage_sentences`, the rule the
    passage store follows for passages it did not cut), in pool order per document."""
    from sciera.corpus.chunker import passage_sentences

    by_doc: dict[str, list[Passage]] = {}
    for p in pool:
        by_doc.setdefault(p.doc_id, []).append(p)
    return {
        doc: (ps[0].title, tuple(s.text for s in passage_sentences(ps)))
        for doc, ps in by_doc.items()
    }


Loader = Callable[..., EvalDataset]

DATASET_LOADERS: dict[str, str] = {
    "beir": "sciera.datasets.beir:load_beir",
    "ssli": "sciera.datasets.loaders:load_ssli",
    "pubmedqa": "sciera.datasets.pubmedqa:load_pubmedqa",
    "bioasq": "sciera.datasets.bioasq:load_bioasq",
    "scifact": "sciera.datasets.scifact:load_scifact",
    "nfcorpus": "sciera.datasets.nfcorpus:load_nfcorpus",
    "fulltext": "sciera.datasets.fulltext:load_fulltext",
    "healthver": "sciera.datasets.pair_eval:load_healthver",
    "covidfact": "sciera.datasets.pair_eval:load_covidfact",
    "evidence_inference": "sciera.datasets.pair_eval:load_evidence_inference",
}
"""Dataset type -> ``module:function`` (imported when used)."""
JUDGED_IN_CORPUS = frozenset({"fulltext"})
"""Types whose judgments name the corpus's own passages: their loader reads the corpus."""


def dataset_loader(kind: str) -> Loader:
    try:
        target = DATASET_LOADERS[kind]
    except KeyError:
        raise ScieraError(
            f"unknown dataset type {kind!r}; choose one of {sorted(DATASET_LOADERS)}"
        ) from None
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def seeded_subset(qids: list[str], limit: int | None, seed: int) -> list[str]:
    """``limit`` ids drawn with ``random.Random(seed)`` from the sorted ids, kept sorted."""
    ordered = sorted(qids)
    if limit is None or limit >= len(ordered):
        return ordered
    return sorted(random.Random(seed).sample(ordered, limit))


def _held_out(
    by_question: dict[str, list[str]], kind: str, path: str | Path, model: str, held_out: str
) -> dict[str, list[str]]:
    """The questions of ``model``'s held-out split; every one must be in the dataset."""
    from sciera.datasets.held_out import held_out_ids

    ids = held_out_ids(model, kind, held_out)
    missing = [i for i in ids if i not in by_question]
    if missing:
        raise ScieraError(
            f"{path}: held_out_of {model}: {len(missing)} of its {len(ids)} held-out "
            f"questions are not judged questions of this dataset (first: {missing[0]!r})"
        )
    return {i: by_question[i] for i in ids}


def load_dataset(
    kind: str,
    path: str | Path,
    *,
    split: str | None = None,
    limit: int | None = None,
    seed: int = 0,
    distractors_only: bool = False,
    specific_only: bool = False,
    unit: Unit | None = None,
    corpus: str | Path | None = None,
    held_out_of: str | None = None,
    held_out: str = "dev",
) -> EvalDataset:
    """Load a dataset by type; ``limit`` questions (seeded sample), judged ones only;
    ``unit="document"`` judges a passage dataset per document (:meth:`EvalDataset.at_documents`);
    ``corpus`` is read by the types judged in it (:data:`JUDGED_IN_CORPUS`).

    The sample is drawn over questions, not ids: every setting of a sampled question is
    kept (``limit=10`` on an SSLI set gives 10 Base and the same 10 SSLI instances).
    ``distractors_only`` keeps only the questions one of whose instances holds a
    distractor (an SSLI build can accept none for a question), in every setting, so
    that Base and SSLI are compared on the questions the distractors test.
    ``specific_only`` keeps only the questions the set's ``specificity.json`` calls
    specific (:mod:`sciera.datasets.ssli.specificity`; ``sciera dataset check`` writes it):
    a question naming no subject that singles out its source is left out.
    ``held_out_of`` keeps only the questions a trained model's card records as its
    ``held_out`` split (:mod:`sciera.datasets.held_out`), before ``limit``."""
    loader = dataset_loader(kind)
    in_corpus = {"corpus": Path(corpus) if corpus else None} if kind in JUDGED_IN_CORPUS else {}
    data = loader(Path(path), split=split, **in_corpus)
    by_question: dict[str, list[str]] = {}
    for qid in data.queries:
        if qid in data.qrels:
            by_question.setdefault(question_of(qid, data.settings.get(qid)), []).append(qid)
    if held_out_of is not None:
        by_question = _held_out(by_question, kind, path, held_out_of, held_out)
    if distractors_only:
        full = loader(Path(path), split=None) if split is not None else data
        tested = {question_of(q, full.settings.get(q)) for q, d in full.distractors.items() if d}
        by_question = {question: ids for question, ids in by_question.items() if question in tested}
    if specific_only:
        if kind != "ssli":
            raise ScieraError(f"specific_only: only SSLI sets have specificity.json, not {kind!r}")
        from sciera.datasets.ssli.specificity import specific_questions

        specific = specific_questions(path)
        by_question = {q: ids for q, ids in by_question.items() if q in specific}
    picked = seeded_subset(list(by_question), limit, seed)
    data = data.subset(sorted(qid for question in picked for qid in by_question[question]))
    return data.at_documents() if unit == "document" else data
