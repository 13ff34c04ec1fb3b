"""Options of one dataset build, and the question source for the no-LLM path."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sciera.datasets.ssli.contexts import DistractorRules
from sciera.errors import ScieraError

MODES = ("ours", "lmqg", "hard-negative")
SETTINGS = ("base", "ssli")
# options that may change between runs on the same output folder
_RESUMABLE_CHANGES = {"max_questions"}


@dataclass(frozen=True, slots=True)
class BuildConfig:
    """What to build. ``mode``: ``ours`` (notes -> QA, LLM distractors), ``lmqg`` (QA
    straight from the passage, LLM distractors) or ``hard-negative`` (mined distractors,
    no LLM for contexts; questions from ``queries`` or else generated as in ``ours``)."""

    mode: str = "ours"
    n_docs: int = 50
    max_questions: int | None = None
    seed: int = 0
    settings: tuple[str, ...] = SETTINGS
    total: int = 30  # candidates per instance
    n_distractors: int = 6
    retries: int = 1  # regenerations of a rejected distractor
    pool: int | None = 1000  # documents embedded for clustering (None: all)
    cluster_size: int = 20  # k = pool / cluster_size
    min_cluster: int = 5  # keep documents of clusters with at least this many members
    min_support: float = 0.6  # answer content words found in the source passage
    repair_questions: bool = True  # rewrite self-referencing questions from their answers
    # reject a question more than this share of the corpus's documents matches on every
    # topic word (None: no such rule; see sciera.datasets.ssli.specificity)
    max_topic_share: float | None = 0.005
    rules: DistractorRules = field(default_factory=DistractorRules)
    retriever: str = "hybrid"
    queries: str | None = None  # BEIR folder: questions + gold docs (hard-negative mode)
    qrels_split: str = "test"
    # abstracts never used as a question's source: the gold abstracts of these SSLI sets
    # and the judged (grade > 0) documents of these qrels files, e.g. a training-side build
    # that must stay disjoint from every evaluation set
    exclude_ssli: tuple[str, ...] = ()
    exclude_qrels: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.rules, dict):  # from to_dict() / build.json
            object.__setattr__(self, "rules", DistractorRules(**self.rules))
        for name in ("settings", "exclude_ssli", "exclude_qrels"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.mode not in MODES:
            raise ScieraError(f"unknown mode {self.mode!r}; choose one of {list(MODES)}")
        bad = [s for s in self.settings if s not in SETTINGS]
        if bad or not self.settings:
            raise ScieraError(f"unknown settings {bad}; choose from {list(SETTINGS)}")
        if self.queries is not None and self.mode != "hard-negative":
            raise ScieraError("--queries (questions from a BEIR set) needs --mode hard-negative")
        if self.max_topic_share is not None and not 0 < self.max_topic_share <= 1:
            raise ScieraError("max_topic_share must be in (0, 1] (or None: no such rule)")
        if not 1 <= self.n_distractors < self.total:
            raise ScieraError(f"n_distractors must be in [1, {self.total - 1}]")

    @property
    def uses_llm(self) -> bool:
        return not (self.mode == "hard-negative" and self.queries is not None)

    @property
    def qa_mode(self) -> str:
        return "lmqg" if self.mode == "lmqg" else "ours"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for name in ("settings", "exclude_ssli", "exclude_qrels"):
            data[name] = list(data[name])
        return data

    def excluded_docs(self) -> set[str]:
        """Every abstract the exclusions name (read from the files each time)."""
        from sciera.corpus import load_qrels, relevant_docs
        from sciera.datasets.ssli.io import ssli_gold_docs

        docs: set[str] = set()
        for path in self.exclude_ssli:
            docs |= ssli_gold_docs(path)
        for path in self.exclude_qrels:
            docs |= relevant_docs(load_qrels(path))
        return docs

    def check_resume(self, previous: dict[str, Any], out_dir: Path) -> None:
        """Refuse to continue a build made with other options."""
        now = self.to_dict()
        previous = {**BuildConfig().to_dict(), **previous}  # options added since that build
        diff = sorted(
            k
            for k in set(now) | set(previous)
            if k not in _RESUMABLE_CHANGES and now.get(k) != previous.get(k)
        )
        if diff:
            raise ScieraError(
                f"{out_dir} holds a build with other options ({', '.join(diff)}); "
                "use a new --out folder or the same options"
            )
