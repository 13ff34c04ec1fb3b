"""Training data for the verifier (rationale selector + verdict model), under the split
discipline every sciera trainer follows.

Sources:

- SciFact training claims (``claims_train.jsonl``) with the sentence lists their rationale
  indices point into (``corpus_sentences.jsonl``). A dev split of whole claims is carved with
  :func:`sciera.train.splits.dev_split` (with the default fraction and seed it is the dev
  split of the shipped cross-encoder and embedder, so their open-setting numbers on it are
  never in-sample); with ``cv_fold`` one of ``cv_folds`` folds of the remaining training
  claims is held out as a test fold as well.
- Retrieved non-evidence abstracts (the project's own first stage, ``hybrid`` by default,
  over an ingested corpus, mined once and cached): their sentences are rationale negatives
  and NOT ENOUGH INFO examples.
- PubMedQA PQA-L questions (yes = SUPPORT, no = CONTRADICT, maybe = NOT ENOUGH INFO), split
  by question into ``cv_folds`` folds; fold ``cv_fold`` (0 when none is given) is held out
  unless ``pubmedqa_all`` (the shipped model).
- Training-side SSLI distractors (sets built from training-side abstracts): each
  distractor is NOT ENOUGH INFO for its question.
- With ``claim_negations``: each SciFact verdict example (gold rationales, cited and
  retrieved abstracts) again with its claim negated by :func:`sciera.verify.negation.
  negate_claim`, SUPPORT and CONTRADICT swapped, NOT ENOUGH INFO kept.

Refused, by :class:`~sciera.train.splits.SplitGuard`: a claim that is a BEIR test claim
(``qrels/test.tsv`` beside the claims file is excluded without being named) stops the run; an
SSLI set whose gold abstracts are behind an evaluation SSLI question stops the run; a
training claim citing an abstract behind an evaluation SSLI question is left out whole
(with its abstracts), never turned into a NOT ENOUGH INFO example.

A zero-shot sentence scorer (the shipped relevance cross-encoder's logit on (claim,
sentence), cached) ranks each abstract's sentences, so negatives and NOT ENOUGH INFO
examples use the sentences a selector would be tempted by, not random ones.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciera.datasets.claims import GoldClaim, read_gold
from sciera.errors import InputError
from sciera.train.splits import SplitGuard, SplitViolation, dev_split
from sciera.verify.base import AbstractText

Progress = Callable[[str, int, int], None]
SUPPORT, CONTRADICT, NEI = 0, 1, 2
LABEL_INDEX = {"SUPPORT": SUPPORT, "CONTRADICT": CONTRADICT}
PUBMEDQA_LABELS = {"yes": SUPPORT, "no": CONTRADICT, "maybe": NEI}
SCORER = "scifact-minilm"  # the zero-shot sentence scorer: the shipped relevance model


@dataclass(frozen=True)
class VerifierDataSpec:
    """Where the verifier's training data comes from and how it is split."""

    claims: str | Path
    sentences: str | Path
    corpus: str | Path | None = None  # ingested corpus for retrieved negatives
    retriever: str = "hybrid"
    depth: int = 10  # abstracts mined per claim
    retrieved_negatives: int = 2  # retrieved non-evidence abstracts per training claim
    dev_fraction: float = 0.12
    seed: int = 0
    cv_folds: int = 5
    cv_fold: int | None = None
    pubmedqa: str | Path | None = None
    pubmedqa_all: bool = False
    ssli_negatives: Sequence[str | Path] = ()
    exclude_qrels: Sequence[str | Path] = ()
    exclude_ssli: Sequence[str | Path] = ()
    max_claims: int | None = None  # the first N training claims only (smoke runs)
    claim_negations: bool = False  # each SciFact verdict example again with its claim negated

    def __post_init__(self) -> None:
        if self.cv_folds < 2:
            raise ValueError(f"cv_folds must be >= 2, got {self.cv_folds}")
        if self.cv_fold is not None and not 0 <= self.cv_fold < self.cv_folds:
            raise ValueError(f"cv_fold must be in [0, {self.cv_folds}), got {self.cv_fold}")
        if self.retrieved_negatives < 0 or self.depth < 1:
            raise ValueError("retrieved_negatives must be >= 0 and depth >= 1")


@dataclass(frozen=True, slots=True)
class SentenceExample:
    """One candidate rationale: sentence ``index`` of ``doc_id`` for claim ``claim_id``."""

    claim_id: str
    doc_id: str
    index: int
    label: int  # 1: in a gold rationale set
    kind: str  # rationale | evidence_other | cited | retrieved
    hardness: float  # the zero-shot scorer's logit


@dataclass(frozen=True, slots=True)
class VerdictExample:
    """(claim or question, sentences, title) -> label index (SUPPORT, CONTRADICT, NEI)."""

    claim: str
    sentences: tuple[str, ...]
    title: str
    label: int
    source: str
    group: str  # the claim / question it came from


@dataclass(frozen=True, slots=True)
class PubMedQAItem:
    id: str
    question: str
    sentences: tuple[str, ...]  # the contexts split into sentences
    long_answer: str
    label: int


@dataclass
class VerifierData:
    abstracts: dict[str, AbstractText]
    claims: dict[str, GoldClaim]
    train_ids: list[str]
    dev_ids: list[str]
    test_ids: list[str]  # the held-out CV fold (empty without cv_fold)
    retrieved: dict[str, list[str]]  # claim id -> first-stage abstracts, best first
    sentence_examples: list[SentenceExample]
    verdict_examples: list[VerdictExample]
    pubmedqa_train: list[PubMedQAItem]
    pubmedqa_held: list[PubMedQAItem]
    guard: SplitGuard
    skipped: dict[str, int] = field(default_factory=dict)
    sources: dict[str, Any] = field(default_factory=dict)
    # dev and held-out claims: the abstracts the pipeline reads, with the reranker's
    # P(relevant) (the open setting; empty without a corpus)
    reranked: dict[str, list[tuple[str, float]]] = field(default_factory=dict)

    def candidates(self, claim_id: str, retrieved: int = 0) -> list[str]:
        """A claim's evidence and cited abstracts, then its first ``retrieved`` retrieved
        ones (no repeats)."""
        c = self.claims[claim_id]
        out = list(dict.fromkeys([*c.evidence, *c.cited_doc_ids]))
        for doc in self.retrieved.get(claim_id, [])[:retrieved]:
            if doc not in out:
                out.append(doc)
        return [d for d in out if d in self.abstracts]

    def card_data(self, spec: VerifierDataSpec) -> dict[str, Any]:
        from collections import Counter

        return {
            "claims": str(spec.claims),
            "sentences": str(spec.sentences),
            "corpus": str(spec.corpus) if spec.corpus else None,
            "negatives_from": f"{spec.retriever} top-{spec.depth} abstracts (Max-P) minus "
            f"evidence and cited; {spec.retrieved_negatives} per training claim",
            "train_claims": len(self.train_ids),
            "dev_claims": len(self.dev_ids),
            "dev_ids": list(self.dev_ids),
            "test_claims": len(self.test_ids),
            "test_ids": list(self.test_ids),
            "sentence_examples": dict(Counter(e.kind for e in self.sentence_examples)),
            "verdict_examples": {
                f"{src}/{('SUPPORT', 'CONTRADICT', 'NEI')[lab]}": n
                for (src, lab), n in sorted(
                    Counter((e.source, e.label) for e in self.verdict_examples).items()
                )
            },
            "claim_negations": spec.claim_negations,
            "pubmedqa_train": len(self.pubmedqa_train),
            "pubmedqa_held_out": len(self.pubmedqa_held),
            "pubmedqa_held_ids": [q.id for q in self.pubmedqa_held],
            "skipped": dict(self.skipped),
            **self.sources,
        }


# --- readers ---------------------------------------------------------------------------------


def load_abstracts(path: str | Path) -> dict[str, AbstractText]:
    """``corpus_sentences.jsonl``: ``{"doc_id", "title", "abstract": [sentence, ...]}``."""
    out: dict[str, AbstractText] = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(str(path), n, "record", f"not valid JSON ({exc.msg})") from None
            sents = rec.get("abstract")
            if not isinstance(sents, list) or not all(isinstance(s, str) for s in sents):
                raise InputError(str(path), n, "abstract", "expected a list of sentences")
            doc = str(rec.get("doc_id", "")).strip()
            if not doc:
                raise InputError(str(path), n, "doc_id", "missing")
            out[doc] = AbstractText(doc, str(rec.get("title") or ""), tuple(sents))
    return out


def load_pubmedqa_items(path: str | Path) -> list[PubMedQAItem]:
    """PQA-L questions, each context passage split into sentences (sorted by id)."""
    from sciera.corpus.sentences import split_sentences

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(str(path), None, "file", f"cannot read PubMedQA JSON: {exc}") from None
    out = []
    for pmid in sorted(data):
        item = data[pmid]
        decision = str(item.get("final_decision", "")).lower()
        if decision not in PUBMEDQA_LABELS:
            raise InputError(str(path), f"record {pmid}", "final_decision", repr(decision))
        contexts = item.get("CONTEXTS")
        if not isinstance(contexts, list) or not contexts:
            raise InputError(str(path), f"record {pmid}", "CONTEXTS", "expected a non-empty list")
        sentences = tuple(s for ctx in contexts for s in split_sentences(str(ctx)))
        out.append(
            PubMedQAItem(
                str(pmid),
                str(item["QUESTION"]),
                sentences,
                str(item.get("LONG_ANSWER") or "").strip(),
                PUBMEDQA_LABELS[decision],
            )
        )
    return out


def ssli_distractors(
    paths: Sequence[str | Path], guard: SplitGuard
) -> tuple[list[VerdictExample], list[dict[str, Any]]]:
    """NOT ENOUGH INFO examples (question, distractor) from training-side SSLI sets (packed
    sets keep their distractors' texts). A set whose gold abstracts the guard forbids (an
    evaluation set) is refused with the instance named."""
    from sciera.datasets.ssli.io import INSTANCES_FILE, iter_jsonl

    out: list[VerdictExample] = []
    sources = []
    for path in paths:
        path = Path(path)
        if path.is_dir():
            packed = sorted(path.glob("instances*.jsonl*"))
            path = packed[0] if packed else path / INSTANCES_FILE
        n = 0
        for _, rec in iter_jsonl(path):
            gold = {str(p).split("#", 1)[0] for p in rec.get("gold_passage_ids") or []}
            bad = sorted(gold - set(guard.allowed_docs(gold)))
            if bad:
                raise SplitViolation(
                    f"{path}: instance {rec.get('id')}: gold abstract {bad[0]} is excluded from "
                    "training (an evaluation SSLI set?); use training-side SSLI sets only"
                )
            if rec.get("setting") != "ssli":
                continue
            qid = "ssli:" + str(rec["id"]).removesuffix("/ssli")
            guard.check_query(qid, str(rec["question"]))
            for cand in rec.get("candidates") or []:
                if cand.get("is_distractor") and cand.get("text"):
                    out.append(
                        VerdictExample(
                            str(rec["question"]), (str(cand["text"]),), "", NEI, "ssli", qid
                        )
                    )
                    n += 1
        sources.append({"path": str(path), "distractors": n})
    return out, sources


# --- splits ----------------------------------------------------------------------------------


def folds(ids: Iterable[str], k: int, seed: int) -> list[list[str]]:
    """``k`` folds of whole ids: sorted, shuffled with ``seed``, dealt round-robin."""
    pool = sorted(set(ids))
    random.Random(seed).shuffle(pool)
    return [sorted(pool[i::k]) for i in range(k)]


def make_guard(spec: VerifierDataSpec) -> SplitGuard:
    """The guard: BEIR ``qrels/test.tsv`` beside the claims file (with ``queries.jsonl``
    texts) excluded without being named, plus the named qrels and SSLI sets."""
    from sciera.corpus import load_beir_queries

    guard = SplitGuard()
    folder = Path(spec.claims).parent
    queries = None
    if (folder / "queries.jsonl").is_file():
        queries = load_beir_queries(folder / "queries.jsonl")
    auto = folder / "qrels" / "test.tsv"
    named = [Path(p) for p in spec.exclude_qrels]
    for path in [auto] if auto.is_file() else []:
        if all(path.resolve() != p.resolve() for p in named):
            guard.exclude_qrels(path, queries)
    for path in named:
        guard.exclude_qrels(path, queries)
    for path in spec.exclude_ssli:
        guard.exclude_ssli(path)
    return guard


# --- the zero-shot sentence scorer -----------------------------------------------------------


class ZeroShotScorer:
    """The shipped relevance cross-encoder's raw logit on (claim, sentence), cached in a
    JSONL file per (group, doc) so a rerun scores nothing twice. Sentences of many jobs are
    scored together, batched by length."""

    CHUNK = 64  # jobs scored (and cached) together

    def __init__(self, cache: Path, progress: Progress | None = None) -> None:
        self.cache = cache
        self.progress = progress
        self.done: dict[str, list[float]] = {}
        if cache.is_file():
            for line in cache.read_text(encoding="utf-8").splitlines():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue  # cut short by a crash: scored again
                self.done[rec["key"]] = rec["scores"]
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            from sciera.artifacts.registry import CROSS_ENCODER, resolve
            from sciera.embed.plain import PairClassifier

            # float32, eval mode; a sentence is short: 128 tokens
            self._model = PairClassifier(resolve(CROSS_ENCODER, SCORER), 128)
        return self._model

    def score(self, jobs: Sequence[tuple[str, str, Sequence[str]]]) -> dict[str, list[float]]:
        """``{key: logits}`` for jobs ``(key, claim, sentences)``."""
        todo = list({j[0]: j for j in jobs if j[0] not in self.done}.values())
        self.cache.parent.mkdir(parents=True, exist_ok=True)
        for start in range(0, len(todo), self.CHUNK):
            chunk = todo[start : start + self.CHUNK]
            pairs = [(claim, s) for _, claim, sents in chunk for s in sents]
            flat = self._load().logits(pairs, 64)
            lines, at = [], 0
            for key, _, sents in chunk:
                self.done[key] = [round(float(x), 4) for x in flat[at : at + len(sents)]]
                at += len(sents)
                lines.append(json.dumps({"key": key, "scores": self.done[key]}))
            with self.cache.open("a", encoding="utf-8") as out:
                out.write("\n".join(lines) + "\n")
            if self.progress:
                self.progress("scoring sentences (zero-shot)", start + len(chunk), len(todo))
        return {j[0]: self.done[j[0]] for j in jobs}


def _top(scores: Sequence[float], k: int, exclude: Iterable[int] = ()) -> list[int]:
    banned = set(exclude)
    order = sorted((i for i in range(len(scores)) if i not in banned), key=lambda i: -scores[i])
    return sorted(order[:k])


# --- preparation -----------------------------------------------------------------------------


def prepare_verifier(
    spec: VerifierDataSpec, settings: Any, work: Path, progress: Progress | None = None
) -> VerifierData:
    """Checked training, dev and held-out records (see the module docstring)."""
    guard = make_guard(spec)
    abstracts = load_abstracts(spec.sentences)
    claims, every, skipped = _checked_claims(spec, guard, abstracts)
    train_ids, dev_ids, test_ids = _split_ids(spec, every, claims)
    keep = set(train_ids) | set(dev_ids) | set(test_ids)
    claims = {k: v for k, v in claims.items() if k in keep}
    retrieved = _retrieved(spec, settings, claims, guard, abstracts, work, progress)
    scorer = ZeroShotScorer(work / "zero_shot.jsonl", progress)
    sentence_ex, verdict_ex = _scifact_examples(
        [claims[i] for i in train_ids], abstracts, retrieved, spec, scorer
    )
    sources: dict[str, Any] = {"zero_shot_scorer": SCORER}
    if spec.ssli_negatives:
        ssli, ssli_sources = ssli_distractors(spec.ssli_negatives, guard)
        verdict_ex += ssli
        sources["ssli_negatives"] = ssli_sources
    pq_train: list[PubMedQAItem] = []
    pq_held: list[PubMedQAItem] = []
    if spec.pubmedqa is not None:
        pq_train, pq_held, sources["pubmedqa"] = _pubmedqa_split(spec)
        verdict_ex += _pubmedqa_examples(pq_train, scorer)
    reranked: dict[str, list[tuple[str, float]]] = {}
    if spec.corpus is not None and (dev_ids or test_ids):
        texts = {cid: claims[cid].claim for cid in (*dev_ids, *test_ids)}
        reranked = _reranked(spec.corpus, texts, settings, work, guard, abstracts, progress)
    # the guard once more over everything that made it in
    for cid in (*train_ids, *dev_ids, *test_ids):
        guard.check_query(cid, claims[cid].claim)
    guard.check_docs({e.doc_id for e in sentence_ex})
    guard.check_docs(d for ids in retrieved.values() for d in ids)
    return VerifierData(
        abstracts,
        claims,
        train_ids,
        dev_ids,
        test_ids,
        retrieved,
        sentence_ex,
        verdict_ex,
        pq_train,
        pq_held,
        guard,
        skipped,
        sources,
        reranked,
    )


def _checked_claims(
    spec: VerifierDataSpec, guard: SplitGuard, abstracts: Mapping[str, AbstractText]
) -> tuple[dict[str, GoldClaim], list[str], dict[str, int]]:
    """The claims the guard lets train (an evaluation claim in the file stops the run),
    every claim id of the file in order, and how many were left out and why."""
    claims: dict[str, GoldClaim] = {}
    every: list[str] = []
    skipped = {
        "text_of_an_evaluation_claim": 0,
        "cites_a_forbidden_abstract": 0,
        "missing_abstract": 0,
    }
    for c in read_gold(spec.claims):
        every.append(c.id)
        if c.id in guard.query_ids:
            raise SplitViolation(
                f"{spec.claims}: claim {c.id} is an evaluation (BEIR test) claim; it cannot be "
                "trained on"
            )
        if guard.query_problem(c.id, c.claim):
            skipped["text_of_an_evaluation_claim"] += 1
            continue
        docs = {*c.evidence, *c.cited_doc_ids}
        if set(guard.allowed_docs(docs)) != docs:
            skipped["cites_a_forbidden_abstract"] += 1
            continue
        if not docs <= set(abstracts):
            skipped["missing_abstract"] += 1
            continue
        claims[c.id] = c
    return claims, every, skipped


def _split_ids(
    spec: VerifierDataSpec, every: Sequence[str], claims: Mapping[str, GoldClaim]
) -> tuple[list[str], list[str], list[str]]:
    """(train, dev, held-out CV fold) claim ids. The split is over every claim of the file,
    the refused ones then left out: the dev split stays the one the cross-encoder and the
    embedder drew from the same claims."""
    train_ids, dev_ids = dev_split(list(every), spec.dev_fraction, spec.seed)
    train_ids = [c for c in train_ids if c in claims]
    dev_ids = [c for c in dev_ids if c in claims]
    test_ids: list[str] = []
    if spec.cv_fold is not None:
        test_ids = folds(train_ids, spec.cv_folds, spec.seed + 1)[spec.cv_fold]
        train_ids = sorted(set(train_ids) - set(test_ids))
    if spec.max_claims is not None:
        train_ids = train_ids[: spec.max_claims]
        dev_ids = dev_ids[: max(1, spec.max_claims // 4)]
        test_ids = test_ids[: max(1, spec.max_claims // 4)] if test_ids else []
    return train_ids, dev_ids, test_ids


def _pubmedqa_split(
    spec: VerifierDataSpec,
) -> tuple[list[PubMedQAItem], list[PubMedQAItem], dict[str, Any]]:
    """PubMedQA's training and held-out questions (one fold held out, none with
    ``pubmedqa_all``) and the card's note of them."""
    assert spec.pubmedqa is not None
    items = load_pubmedqa_items(spec.pubmedqa)
    held = (
        set()
        if spec.pubmedqa_all
        else set(folds([q.id for q in items], spec.cv_folds, spec.seed + 2)[spec.cv_fold or 0])
    )
    source = {
        "path": str(spec.pubmedqa),
        "folds": spec.cv_folds,
        "fold_seed": spec.seed + 2,
        "held_out_fold": None if spec.pubmedqa_all else (spec.cv_fold or 0),
    }
    return [q for q in items if q.id not in held], [q for q in items if q.id in held], source


def _reranked(
    corpus: str | Path,
    texts: Mapping[str, str],
    settings: Any,
    work: Path,
    guard: SplitGuard,
    abstracts: Mapping[str, AbstractText],
    progress: Progress | None,
) -> dict[str, list[tuple[str, float]]]:
    """The dev (and held-out) claims' reranked abstracts with P(relevant), as ask reads
    them, those the guard refuses or the sentence file lacks left out."""
    ranked = reranked_candidates(
        corpus, dict(texts), settings, work / "reranked.json", progress=progress
    )
    out = {}
    for cid, rows in ranked.items():
        allowed = set(guard.allowed_docs([d for d, _ in rows]))
        out[cid] = [(d, x) for d, x in rows if d in allowed and d in abstracts]
    return out


def _retrieved(
    spec: VerifierDataSpec,
    settings: Any,
    claims: Mapping[str, GoldClaim],
    guard: SplitGuard,
    abstracts: Mapping[str, AbstractText],
    work: Path,
    progress: Progress | None,
) -> dict[str, list[str]]:
    """Each claim's first-stage abstracts (allowed by the guard, in the sentence file), best
    first; nothing without a corpus."""
    if spec.corpus is None:
        return {}
    from sciera.train.data import mine_candidates

    mined = mine_candidates(
        spec.corpus,
        {cid: c.claim for cid, c in claims.items()},
        settings=settings,
        retriever=spec.retriever,
        depth=spec.depth,
        cache=work / "mined.jsonl",
        progress=progress,
    )
    out = {}
    for cid, cands in mined.items():
        docs = list(dict.fromkeys(str(p).split("#", 1)[0] for p, _ in cands))
        out[cid] = [d for d in guard.allowed_docs(docs) if d in abstracts]
    return out


RERANK_DEPTH = 30  # first-stage documents the shipped cross-encoder reranks, as ask does


def reranked_candidates(
    corpus: str | Path,
    claims: Mapping[str, str],
    settings: Any,
    cache: Path,
    keep: int = 10,
    progress: Progress | None = None,
    *,
    depth: int = RERANK_DEPTH,
    retriever: str = "hybrid",
    rerank: bool = True,
    precision: str | None = None,
) -> dict[str, list[tuple[str, float]]]:
    """``{claim id: [(doc_id, P(relevant)), ...]}``, best first: what the pipeline's verify
    stage reads for a claim (the first stage's top ``depth`` documents (Max-P) reranked by
    the shipped cross-encoder, its calibrated fused P(relevant); ``rerank=False``: the
    first stage's scores), the top ``keep``; cached in ``cache`` keyed by the store's
    fingerprint and these parameters. ``precision``: the cross-encoder's (default: the
    settings')."""
    from sciera.corpus import PassageStore
    from sciera.retrieve import open_retriever
    from sciera.retrieve.maxp import maxp

    with PassageStore.open(corpus) as store:
        key = f"{store.fingerprint()}|{retriever}|{depth}|{keep}|{rerank}|{precision}"
    done: dict[str, list[tuple[str, float]]] = {}
    if cache.is_file():
        saved = json.loads(cache.read_text(encoding="utf-8"))
        if saved.get("key") == key:
            done = {c: [(d, float(x)) for d, x in rows] for c, rows in saved["claims"].items()}
    todo = [c for c in claims if c not in done]
    if todo:
        first = open_retriever(corpus, retriever, settings)
        ce = None
        if rerank:
            from sciera.rerank.cross_encoder import CrossEncoderReranker

            options = {"precision": precision} if precision else {}
            ce = CrossEncoderReranker("scifact-minilm", score="fused", **options)
        for n, cid in enumerate(todo, 1):
            ranking = maxp(first.search(claims[cid], 10 * depth), depth)
            if ce is not None:
                ranking = ce.rerank(claims[cid], ranking)
            done[cid] = [(it.passage.doc_id, float(it.score)) for it in ranking.items[:keep]]
            if progress:
                progress("retrieving claims", n, len(todo))
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps({"key": key, "claims": done}), encoding="utf-8")
    return {c: done[c] for c in claims}


def _scifact_examples(
    train: Sequence[GoldClaim],
    abstracts: Mapping[str, AbstractText],
    retrieved: Mapping[str, Sequence[str]],
    spec: VerifierDataSpec,
    scorer: ZeroShotScorer,
) -> tuple[list[SentenceExample], list[VerdictExample]]:
    jobs, plan = [], []
    for c in train:
        gold = set(c.evidence)
        cited = [d for d in c.cited_doc_ids if d not in gold]
        others = [d for d in retrieved.get(c.id, []) if d not in gold and d not in cited]
        for doc, kind in (
            *((d, "evidence") for d in c.evidence),
            *((d, "cited") for d in cited),
            *((d, "retrieved") for d in others[: spec.retrieved_negatives]),
        ):
            jobs.append((f"{c.id}|{doc}", c.claim, abstracts[doc].sentences))
            plan.append((c, doc, kind))
    scores = scorer.score(jobs)
    sentences: list[SentenceExample] = []
    verdicts: list[VerdictExample] = []
    first_retrieved: set[str] = set()
    for c, doc, kind in plan:
        a, s = abstracts[doc], scores[f"{c.id}|{doc}"]
        if kind == "evidence":
            g = c.evidence[doc]
            rat = sorted(set().union(*g.rationales))
            for i in range(len(a.sentences)):
                k = "rationale" if i in rat else "evidence_other"
                sentences.append(SentenceExample(c.id, doc, i, int(i in rat), k, s[i]))
            label = LABEL_INDEX[g.label]
            variants = [(rat, "scifact_gold")]
            if len(g.rationales) > 1:
                variants += [(sorted(r), "scifact_gold_set") for r in g.rationales]
            extra = _top(s, 1, exclude=rat)
            if extra:
                variants.append((sorted([*rat, *extra]), "scifact_noisy"))
            for idx, source in variants:
                text = tuple(a.sentences[i] for i in idx)
                verdicts.append(VerdictExample(c.claim, text, a.title, label, source, c.id))
        else:
            for i in range(len(a.sentences)):
                sentences.append(SentenceExample(c.id, doc, i, 0, kind, s[i]))
            if kind == "retrieved":
                if c.id in first_retrieved:
                    continue  # one retrieved NEI verdict example per claim
                first_retrieved.add(c.id)
            idx = _top(s, 2)
            verdicts.append(
                VerdictExample(
                    c.claim,
                    tuple(a.sentences[i] for i in idx),
                    a.title,
                    NEI,
                    f"scifact_{kind}",
                    c.id,
                )
            )
    if spec.claim_negations:
        verdicts += negated_examples(verdicts)
    return sentences, verdicts


_FLIP = {SUPPORT: CONTRADICT, CONTRADICT: SUPPORT, NEI: NEI}


def negated_examples(examples: Sequence[VerdictExample]) -> list[VerdictExample]:
    """Each example once more with its claim negated and SUPPORT / CONTRADICT swapped (NOT
    ENOUGH INFO stays: a negated claim is no closer to an unrelated abstract); the several
    rationale sets of one gold abstract are negated once, as ``scifact_gold``. Claims no
    rule negates are left out."""
    from sciera.verify.negation import negate_claim

    out = []
    for e in examples:
        if e.source in ("scifact_gold_set", "scifact_noisy"):
            continue
        negated = negate_claim(e.claim)
        if negated is not None:
            out.append(
                VerdictExample(
                    negated, e.sentences, e.title, _FLIP[e.label], e.source + "_negated", e.group
                )
            )
    return out


def _pubmedqa_examples(
    items: Sequence[PubMedQAItem], scorer: ZeroShotScorer
) -> list[VerdictExample]:
    scores = scorer.score([(f"pubmedqa:{q.id}", q.question, q.sentences) for q in items])
    out = []
    for q in items:
        if q.long_answer:
            out.append(
                VerdictExample(q.question, (q.long_answer,), "", q.label, "pubmedqa_long", q.id)
            )
        idx = _top(scores[f"pubmedqa:{q.id}"], 3)
        out.append(
            VerdictExample(
                q.question,
                tuple(q.sentences[i] for i in idx),
                "",
                q.label,
                "pubmedqa_context",
                q.id,
            )
        )
    return out
