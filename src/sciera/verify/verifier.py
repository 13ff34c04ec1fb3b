"""Verify a claim against given abstracts: rationale selection, then a verdict per abstract,
then the overall verdict (:func:`sciera.verify.aggregate.aggregate`). No retrieval here:
the caller (the pipeline's verify stage, a benchmark) decides which abstracts to read.

Per abstract, with a :class:`VerifyPolicy`:

1. the selector gives P(rationale) for every sentence (one batched call for all abstracts);
2. the rationales are the sentences with P >= ``min_rationale``, at most
   ``max_rationales`` (the best), in abstract order; when none passes, the verdict model
   still reads the ``fallback`` best sentences (0: the abstract is NOT ENOUGH INFO without
   a verdict call, as in VeriSci);
3. the verdict model gives P(SUPPORT), P(CONTRADICT), P(NOT ENOUGH INFO) for those sentences
   (one batched call); the label is the most probable one, or NOT ENOUGH INFO when its
   probability is below ``min_confidence``.

With ``min_relevance`` above 0, an abstract whose calibrated P(relevant) is known (the
reranker's, :attr:`AbstractText.relevance`) is gated by its *evidence score*
``e = P(relevant) ** w * (1 - P(NOT ENOUGH INFO)) ** (1 - w)`` (``w`` the policy's
``relevance_weight``): below ``min_relevance`` it is NOT ENOUGH INFO (confidence 1 - e;
when ``P(relevant) ** w`` alone is below, without a verdict call); at or above, it is
evidence and the verdict model decides which way: SUPPORT or CONTRADICT, whichever is more
probable, with confidence e times that label's share of P(SUPPORT) + P(CONTRADICT). With
``w`` = 1 the relevance model alone decides *whether* an abstract bears on the claim (it was
trained on many more relevance labels than the verdict model saw); a smaller ``w`` lets the
verdict model's NOT ENOUGH INFO count too (the combined verdict's, chosen on dev claims; a
question is gated by P(relevant) alone, since its third label, "maybe", says the evidence is
undecided, not that the abstract is off the topic). Abstracts without a known relevance are
decided as above.

An abstract's ``rationales`` are the sentences cited for its verdict, verbatim with their
indices and scores: the sentences read (step 2), or, with ``min_cited`` set, those of the
best ``max_rationales`` whose P(rationale) reaches ``min_cited`` (else the best one). The
verdict then reads the cited sentences together with those of step 2, and a fallback
sentence it read as context is not cited as evidence (:func:`read_and_cite`). A selector
with a citer (:class:`sciera.verify.base.CitingSelector`: a model trained on rationale
labels alone, :mod:`sciera.verify.citer`) and a policy with ``min_quoted`` set quote the
citer's best sentences instead (those reaching ``min_quoted``, else its best one): the
verdict reads and decides exactly as without it, and the citer chooses which sentences
of the abstract say so. An abstract decided NOT ENOUGH INFO is evidence for neither side:
it shows the sentences it read, the closest ones (SciFact's metrics do not count them). A
question reads as the question combiner's training rows were read
(:meth:`VerifyPolicy.for_question`): its best ``max_rationales`` sentences when none passes
``min_rationale``, and it cites what it reads (``min_cited`` is chosen on dev claims).

The policy's defaults are placeholders; a trained model's card carries the values chosen
on its dev split (:meth:`VerifyPolicy.from_card`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from sciera.types import NOT_ENOUGH_INFO, VERDICT_LABELS, AbstractVerdict, Rationale, Verification
from sciera.verify.aggregate import DEFAULT_STRONG, aggregate
from sciera.verify.base import (
    AbstractText,
    CitingSelector,
    RationaleSelector,
    VerdictInput,
    VerdictModel,
    kind_of,
)

_NEI = VERDICT_LABELS.index(NOT_ENOUGH_INFO)


@dataclass(frozen=True)
class VerifyPolicy:
    """How selector scores and verdict probabilities become decisions."""

    min_rationale: float = 0.5
    max_rationales: int = 3
    fallback: int = 2
    min_confidence: float = 0.0
    strong: float = DEFAULT_STRONG
    min_relevance: float = 0.0  # 0: no relevance gate
    relevance_weight: float = 1.0  # w of the evidence score; 1: P(relevant) alone
    min_cited: float | None = None  # None: cite the sentences read
    # with a citer (a CitingSelector's cite_many): the citer's P(rationale) a sentence needs
    # to be quoted; None: no citer, cite as min_cited says
    min_quoted: float | None = None

    def __post_init__(self) -> None:
        if self.max_rationales < 1 or self.fallback < 0:
            raise ValueError("max_rationales must be >= 1 and fallback >= 0")
        for name in (
            "min_rationale",
            "min_confidence",
            "strong",
            "min_relevance",
            "relevance_weight",
        ):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        for name in ("min_cited", "min_quoted"):
            value = getattr(self, name)
            if value is not None and not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1] or None, got {value}")

    @classmethod
    def from_card(cls, card: Mapping[str, Any], **overrides: Any) -> VerifyPolicy:
        """The policy a model card states (its ``policy`` section), with ``overrides``."""
        names = {f.name for f in fields(cls)}
        given = {k: v for k, v in (card.get("policy") or {}).items() if k in names}
        return cls(**{**given, **{k: v for k, v in overrides.items() if v is not None}})

    def for_question(self) -> VerifyPolicy:
        """How a question reads an abstract: when no sentence passes ``min_rationale``, its
        best ``max_rationales`` (the inputs the question combiner and the PubMedQA benchmarks
        were fitted and scored on), and it cites what it reads (``min_cited`` and
        ``fallback`` are chosen on claims)."""
        return replace(self, min_cited=None, min_quoted=None, fallback=self.max_rationales)


def pick_rationales(scores: Sequence[float], policy: VerifyPolicy) -> tuple[list[int], bool]:
    """(sentence indices in abstract order, whether they passed ``min_rationale``): the
    passing ones (best ``max_rationales``), else the ``fallback`` best."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    passing = [i for i in order if scores[i] >= policy.min_rationale][: policy.max_rationales]
    if passing:
        return sorted(passing), True
    return sorted(order[: min(policy.fallback, policy.max_rationales)]), False


def read_and_cite(
    scores: Sequence[float], policy: VerifyPolicy, quote_scores: Sequence[float] | None = None
) -> tuple[list[int], list[int]]:
    """(the sentences the verdict reads, those cited as the rationale), each in abstract
    order: without ``min_cited`` both are :func:`pick_rationales`'; with it, the cited are
    the best ``max_rationales`` with P(rationale) >= ``min_cited`` (else the best one, when
    anything is read) and the verdict reads them as well. With ``quote_scores`` (a citer's
    P(rationale)) and the policy's ``min_quoted``, what is read stays the same and the
    cited are the citer's best ``max_rationales`` reaching ``min_quoted`` (else its best
    one, when anything is read)."""
    read, _ = pick_rationales(scores, policy)
    cited = read
    if policy.min_cited is not None:
        cited = _best(scores, policy.min_cited, policy.max_rationales, bool(read))
        read = sorted(set(read) | set(cited))
    if quote_scores is not None and policy.min_quoted is not None:
        if len(quote_scores) != len(scores):
            raise ValueError(f"{len(quote_scores)} citing scores for {len(scores)} sentences")
        cited = quoted(quote_scores, policy) if read else []
    return read, cited


def quoted(quote_scores: Sequence[float], policy: VerifyPolicy) -> list[int]:
    """The sentences a citer quotes for an abstract the verdict read: its best
    ``max_rationales`` with P(rationale) >= the policy's ``min_quoted``, else its best one
    (in abstract order)."""
    if policy.min_quoted is None:
        raise ValueError("the policy sets no min_quoted")
    return _best(quote_scores, policy.min_quoted, policy.max_rationales, True)


def _best(scores: Sequence[float], threshold: float, most: int, or_best: bool) -> list[int]:
    """The best ``most`` indices reaching ``threshold``, in order; none reaching it: the
    best one when ``or_best``, else none."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    passing = [i for i in order[:most] if scores[i] >= threshold]
    return sorted(passing or (order[:1] if or_best else []))


def decide(probs: Sequence[float], policy: VerifyPolicy) -> tuple[str, float]:
    """(label, confidence) from label probabilities: the most probable label, NOT ENOUGH
    INFO when that is below ``min_confidence``."""
    best = max(range(3), key=lambda i: probs[i])
    if best != _NEI and probs[best] < policy.min_confidence:
        return NOT_ENOUGH_INFO, float(probs[_NEI])
    return VERDICT_LABELS[best], float(probs[best])


def gated(item: AbstractText, policy: VerifyPolicy) -> bool:
    """Whether the relevance gate decides if ``item`` is evidence."""
    return policy.min_relevance > 0 and item.relevance is not None


def evidence_score(relevance: float, probs: Sequence[float] | None, weight: float) -> float:
    """``relevance ** weight * (1 - P(NOT ENOUGH INFO)) ** (1 - weight)``; without
    ``probs`` (no verdict read yet) its upper bound, ``relevance ** weight``."""
    rel = max(0.0, float(relevance)) ** weight
    if probs is None or weight >= 1.0:
        return rel
    return rel * max(0.0, 1.0 - float(probs[_NEI])) ** (1.0 - weight)


def decide_relevant(probs: Sequence[float], evidence: float) -> tuple[str, float]:
    """(label, confidence) of an abstract the relevance gate let through: SUPPORT or
    CONTRADICT, whichever is more probable; confidence its evidence score times that
    label's share."""
    best = 0 if probs[0] >= probs[1] else 1
    share = probs[best] / (probs[0] + probs[1]) if probs[0] + probs[1] > 0 else 0.5
    return VERDICT_LABELS[best], float(evidence * share)


def verify_abstracts(
    claim: str,
    abstracts: Sequence[AbstractText | tuple[str, str, Sequence[str]]],
    selector: RationaleSelector,
    verdict: VerdictModel,
    policy: VerifyPolicy | None = None,
) -> Verification:
    """The verdict of each abstract on ``claim`` and the overall one. ``abstracts`` are
    :class:`AbstractText` or ``(doc_id, title, sentences)`` tuples; verdicts keep their
    order."""
    policy = policy or VerifyPolicy()
    items = [
        a if isinstance(a, AbstractText) else AbstractText(a[0], a[1], tuple(a[2]))
        for a in abstracts
    ]
    items = [a for a in items if a.sentences]
    scores = selector.score_many(claim, items) if items else []
    # a question's third label is "maybe" (undecided), not "off the topic": it is gated by
    # P(relevant) alone (the weight was chosen on claims) and reads as its combiner was fitted
    is_claim = kind_of(claim) == "claim"
    w = policy.relevance_weight if is_claim else 1.0
    cite = policy if is_claim else policy.for_question()
    below = {  # the evidence score cannot reach the gate whatever the verdict: no call
        k
        for k, item in enumerate(items)
        if gated(item, policy)
        and evidence_score(item.relevance or 0.0, None, w) < policy.min_relevance
    }
    # a citer (a model apart from the selector's reading scores) picks the quoted sentences
    # of the abstracts that can be evidence (one below the gate quotes nothing)
    cites: dict[int, Sequence[float]] = {}
    if cite.min_quoted is not None and isinstance(selector, CitingSelector):
        open_ = [k for k in range(len(items)) if k not in below]
        got = selector.cite_many(claim, [items[k] for k in open_]) if open_ else None
        cites = dict(zip(open_, got, strict=True)) if got is not None else {}
    picks = [read_and_cite(s, cite, cites.get(k)) for k, s in enumerate(scores)]
    asked = [k for k, (idx, _) in enumerate(picks) if idx and k not in below]
    probs = verdict.predict_many(
        claim,
        [
            VerdictInput(tuple(items[k].sentences[i] for i in picks[k][0]), items[k].title)
            for k in asked
        ],
    )
    by_item = dict(zip(asked, probs, strict=True))
    verdicts = []
    for k, item in enumerate(items):
        read, cited = picks[k]
        p = by_item.get(k, (0.0, 0.0, 1.0))
        if gated(item, policy) and (k in below or k in by_item):
            e = evidence_score(item.relevance or 0.0, by_item.get(k), w)
            if e < policy.min_relevance:
                label, confidence = NOT_ENOUGH_INFO, 1.0 - e
            else:
                label, confidence = decide_relevant(p, e)
        else:
            label, confidence = decide(p, policy)
        # evidence cites its rationale; an abstract that is not shows the closest sentences read
        shown, by = cited, cites.get(k, scores[k])
        if label == NOT_ENOUGH_INFO:
            shown, by = read, scores[k]
        rationales = tuple(
            Rationale(item.doc_id, i, item.sentences[i], float(by[i])) for i in shown
        )
        verdicts.append(
            AbstractVerdict(
                item.doc_id,
                item.title,
                label,
                confidence,
                tuple(map(float, p)),  # type: ignore[arg-type]
                rationales,
                item.relevance if gated(item, policy) else None,
                read=k in by_item,
            )
        )
    return aggregate(claim, verdicts, policy.strong)
