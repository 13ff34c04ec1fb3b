"""The experiment file: a validated YAML schema (pydantic, unknown keys rejected).

    name: scifact_first_stage
    dataset: {type: beir, path: ../shared/data/scifact, split: test, limit: 50, seed: 13}
    corpus: corpora/scifact            # ingested + indexed; not needed with `candidates`
    settings: {embed: {backend: minilm}}   # overrides of the settings tree
    metrics: [ndcg@10, recall@100, hit@5, f1]
    judges: [{name: lfs}]              # LLM judges of generated answers
    repeats: 3                         # default: 3 for pipelines with an LLM, else 1
    seeds: [0, 1, 2]                   # one per repeat (default 0, 1, 2, ...)
    pipelines:
      - {name: bm25, retriever: bm25, depth: 100}
      - name: hybrid+deepera
        retriever: hybrid
        reranker: deepera
        rerank_depth: 30
        filter: {tau: 0.8, top_k: 5}     # ask's filter; default: keep every passage
      - name: agent                    # the research agent instead of rerank + answer
        retriever: hybrid
        agent: research
        agent_params: {max_steps: 6, q2q: q+r}

Relative paths are read relative to the YAML file. Any error -> one line
``file: field.path: problem`` (:func:`load_experiment`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from sciera.errors import ScieraError
from sciera.pipeline.spec import CANDIDATES, PipelineSpec
from sciera.settings import FilterSettings
from sciera.yamlfile import first_problem, read_yaml

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SubcorpusSpec(_Strict):
    """The documents a corpus-searching pipeline may return: the judged documents of the
    selected questions plus others (:func:`sciera.eval.subcorpus.build_subcorpus`)."""

    kind: Literal["bm25", "random"] = Field(
        "bm25",
        description="bm25: plus each question's top `pool` BM25 documents over the whole "
        "corpus (its strongest lexical distractors); random: plus `others` documents drawn "
        "with `seed`.",
    )
    pool: int | None = Field(None, ge=1, description="bm25: documents per question (5).")
    others: int | None = Field(None, ge=1, description="random: documents drawn.")
    seed: int = Field(0, description="random: the draw's seed.")

    @model_validator(mode="after")
    def _kind_options(self) -> SubcorpusSpec:
        if self.kind == "bm25" and self.others is not None:
            raise ValueError("others: only kind random draws others; bm25 takes pool")
        if self.kind == "random" and self.pool is not None:
            raise ValueError("pool: only kind bm25 takes pool; random takes others")
        if self.kind == "random" and self.others is None:
            raise ValueError("others: required by kind random")
        return self


class DatasetSpec(_Strict):
    type: str = Field(
        description="Dataset loader: beir, ssli, pubmedqa, bioasq, scifact, nfcorpus, fulltext, "
        "healthver, covidfact or evidence_inference."
    )
    path: Path
    split: str | None = Field(None, description="BEIR qrels split; SSLI setting filter.")
    limit: int | None = Field(None, ge=1, description="Seeded subset of this many questions.")
    seed: int = 0
    distractors_only: bool = Field(
        False,
        description="Only questions with a distractor (SSLI), in every setting; before limit.",
    )
    specific_only: bool = Field(
        False,
        description="Only questions whose subject singles out their source (SSLI: the "
        "set's specificity.json, written by `sciera dataset check`); before limit.",
    )
    unit: Literal["document", "passage"] | None = Field(
        None,
        description="document: judge a passage dataset per document (Max-P), e.g. PubMedQA "
        "over an ingested corpus whose chunks are not the dataset's passages.",
    )
    held_out_of: str | None = Field(
        None,
        description="Only the questions a trained model never trained on, as its card "
        "records them (a verifier's name or folder: SciFact dev claims or CV fold, PubMedQA "
        "held-out questions; sciera.datasets.held_out); before limit.",
    )
    subcorpus: SubcorpusSpec | None = Field(
        None,
        description="Search only a sub-corpus: the judged documents of the selected "
        "questions plus others ({kind: bm25, pool: 5} or {kind: random, others: N, seed: S}).",
    )
    held_out: Literal["dev", "cv_fold"] = Field(
        "dev",
        description="held_out_of's split: dev (SciFact: its dev claims; PubMedQA: its "
        "held-out questions) or cv_fold (SciFact: the cross-validation fold it left out).",
    )

    def loader_options(self) -> dict[str, Any]:
        """The options :func:`sciera.datasets.loaders.load_dataset` takes (not the
        sub-corpus, which the runner builds over the loaded questions)."""
        return self.model_dump(exclude={"type", "path", "subcorpus"})

    @field_validator("type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        from sciera.datasets.loaders import DATASET_LOADERS

        if value not in DATASET_LOADERS:
            raise ValueError(
                f"unknown dataset type {value!r} (choose from {', '.join(sorted(DATASET_LOADERS))})"
            )
        return value

    @model_validator(mode="after")
    def _specific_needs_ssli(self) -> DatasetSpec:
        if self.specific_only and self.type != "ssli":
            raise ValueError(f"specific_only: only SSLI sets are judged for it, not {self.type}")
        if self.held_out_of is not None or self.held_out != "dev":
            from sciera.datasets.held_out import card_field

            if self.held_out_of is None:
                raise ValueError("held_out: given without held_out_of")
            try:
                card_field(self.type, self.held_out)
            except ScieraError as exc:
                raise ValueError(str(exc)) from None
        return self


class JudgeSpec(_Strict):
    name: str = "lfs"
    samples: int | None = Field(
        None, ge=1, description="Sample n grades and average; default: expected value."
    )
    llm: dict[str, Any] = Field(default_factory=dict, description="llm settings for the judge.")
    rubrics: Path | None = Field(None, description="rubric_coverage: the rubrics JSONL file.")
    max_words: int | None = Field(
        None, ge=1, description="rubric_coverage: answers cut to this many words (250)."
    )

    @field_validator("name")
    @classmethod
    def _known_judge(cls, value: str) -> str:
        from sciera.eval.judges import JUDGES

        if value not in JUDGES:
            raise ValueError(f"unknown judge {value!r} (choose from {', '.join(sorted(JUDGES))})")
        return value

    @model_validator(mode="after")
    def _judge_options(self) -> JudgeSpec:
        from sciera.eval.judges import JUDGES

        judge = JUDGES[self.name]
        takes = getattr(judge, "OPTIONS", ())
        for key in ("rubrics", "max_words"):
            if getattr(self, key) is not None and key not in takes:
                raise ValueError(f"{key}: the {self.name} judge takes no {key}")
        for key in getattr(judge, "REQUIRED", ()):
            if getattr(self, key) is None:
                raise ValueError(f"{key}: required by the {self.name} judge")
        return self

    def options(self) -> dict[str, Any]:
        """The judge's own options that are set (passed to its constructor)."""
        return {k: v for k in ("rubrics", "max_words") if (v := getattr(self, k)) is not None}


class ExperimentPipeline(PipelineSpec):
    """One pipeline of an experiment: the answering pipeline's spec
    (:class:`~sciera.pipeline.PipelineSpec`: stages and their options), a name, how a
    candidate pool is ordered, or a multi-step agent in place of its stages.

    Unlike ``sciera ask``'s, an experiment pipeline's filter keeps every passage unless
    told (``filter: {tau: 0.8, top_k: 5}`` is ask's); ranking metrics score the kept
    passages when the filter thresholds, else the whole reranked (or first-stage) order.
    """

    name: str
    pool_order: Literal["given", "neutral"] = Field(
        "given",
        description=(
            "retriever 'candidates': the pool as listed ('given'), or as a set ('neutral': "
            "equal scores, order fixed by a hash of question and passage id). Use 'neutral' "
            "for rerankers that read position or first-stage rank (llm_listwise, DeepEra "
            "with a rank-feature calibrator) on SSLI sets, whose distractors are listed last."
        ),
    )
    filter: FilterSettings = Field(
        default_factory=lambda: FilterSettings(use_tau=False, top_k=None),
        description="Which reranked passages the evidence and the answer read: tau over "
        "calibrated scores (off unless set), at most top_k (default: every passage).",
    )
    agent: str | None = Field(
        None,
        description=(
            "A multi-step agent (research) that searches with `retriever` and answers in "
            "place of the reranker, evidence and generator stages; `depth` is unused."
        ),
    )
    agent_params: dict[str, Any] = Field(default_factory=dict)
    rerank_unit: Literal["passage", "document"] = Field(
        "passage",
        description=(
            "On a dataset judged per document: 'document' gives the pipeline the first "
            "stage's documents, each as its best passage (Max-P), so the reranker reads the "
            "top rerank_depth documents, as `sciera eval retrieval --unit document "
            "--reranker` does; 'passage': the top rerank_depth passages."
        ),
    )
    settings: dict[str, Any] = Field(
        default_factory=dict,
        description=(
            "Overrides of the experiment's settings for this pipeline alone, e.g. "
            "{embed: {backend: minilm}} (its first stage with another embedder) or "
            "{retrieve: {sections: [methods, results]}}."
        ),
    )

    @field_validator("name")
    @classmethod
    def _file_safe(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(f"{value!r} must be one word of letters, digits and _ . + -")
        return value

    @field_validator("settings")
    @classmethod
    def _valid_settings(cls, value: dict[str, Any]) -> dict[str, Any]:
        from sciera.settings import Settings, with_overrides

        try:
            with_overrides(Settings.model_construct(), value)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(part) for part in err["loc"])
            raise ValueError(f"{where}: {err['msg']}") from None
        return value

    @field_validator("agent")
    @classmethod
    def _known_agent(cls, value: str | None) -> str | None:
        from sciera.research.registry import AGENTS

        if value is not None and value not in AGENTS:
            raise ValueError(f"unknown agent {value!r} (choose from {', '.join(sorted(AGENTS))})")
        return value

    @field_validator("reranker_params")
    @classmethod
    def _filter_apart(cls, value: dict[str, Any]) -> dict[str, Any]:
        moved = sorted(set(value) & {"tau", "top_k", "use_filter"})
        if moved:
            raise ValueError(
                f"{moved[0]}: the filter stage's option now; give it as filter: "
                "{tau: ..., top_k: ..., use_tau: ...}"
            )
        return value

    @model_validator(mode="after")
    def _agent_alone(self) -> ExperimentPipeline:
        if self.agent is None:
            if self.agent_params:
                raise ValueError("agent_params: given without an agent")
            return self
        own = [f for f in ("reranker", "evidence", "generator") if getattr(self, f) is not None]
        if own:
            raise ValueError(
                f"{own[0]}: an agent pipeline has its own stages; set them in agent_params"
            )
        if self.retriever == CANDIDATES:
            raise ValueError("retriever: an agent searches a corpus, not candidate pools")
        from sciera.research.registry import agent_options

        try:
            agent_options(self.agent_params)
        except (ValueError, ScieraError) as exc:  # unknown key / the options' own checks
            raise ValueError(f"agent_params: {exc}") from None
        return self

    @property
    def uses_llm(self) -> bool:
        return super().uses_llm or self.agent is not None

    def stages(self) -> PipelineSpec:
        """The answering pipeline's spec alone (what :func:`sciera.pipeline.build_pipeline`
        builds)."""
        fields = set(PipelineSpec.model_fields)
        return PipelineSpec(**{k: v for k, v in self if k in fields})


class Experiment(_Strict):
    name: str
    dataset: DatasetSpec
    corpus: Path | None = Field(None, description="Ingested + indexed corpus directory.")
    preset: str | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    metrics: list[str] = Field(min_length=1)
    judges: list[JudgeSpec] = Field(default_factory=list)
    repeats: int | None = Field(None, ge=1, description="Default: 3 with an LLM, else 1.")
    seeds: list[int] | None = None
    pipelines: list[ExperimentPipeline] = Field(min_length=1)

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, value: list[str]) -> list[str]:
        from sciera.eval.metrics import parse_metric

        out = []
        for i, spec in enumerate(value):
            try:
                out.append(parse_metric(spec).label)
            except ValueError as exc:
                raise ValueError(f"[{i}]: {exc}") from None
        return out

    @model_validator(mode="after")
    def _consistent(self) -> Experiment:
        names = [p.name for p in self.pipelines]
        dups = sorted({n for n in names if names.count(n) > 1})
        if dups:
            raise ValueError(f"pipeline names must be unique, repeated: {dups}")
        if self.seeds is not None and len(self.seeds) < self.max_repeats:
            raise ValueError(f"seeds: {len(self.seeds)} seeds for {self.max_repeats} repeats")
        return self

    @property
    def max_repeats(self) -> int:
        return max(self.repeats_of(p) for p in self.pipelines)

    def repeats_of(self, pipeline: ExperimentPipeline) -> int:
        if self.repeats is not None:
            return self.repeats
        return 3 if pipeline.uses_llm or self.judges else 1

    def seed_of(self, repeat: int) -> int:
        return self.seeds[repeat] if self.seeds is not None else repeat

    def only(self, names: Iterable[str]) -> Experiment:
        """This experiment with the pipelines ``names`` alone, in the file's order (run into
        a results directory, the others keep their results there and in the report)."""
        wanted = list(dict.fromkeys(names))
        listed = [p.name for p in self.pipelines]
        unknown = [n for n in wanted if n not in listed]
        if unknown:
            raise ScieraError(
                f"pipeline {unknown[0]!r} is not in experiment {self.name!r} "
                f"(its pipelines: {', '.join(listed)})"
            )
        if not wanted:
            return self
        return self.model_copy(
            update={"pipelines": [p for p in self.pipelines if p.name in wanted]}
        )


def _check_paths(exp: Experiment, source: str) -> None:
    if not exp.dataset.path.exists():
        raise ScieraError(f"{source}: dataset.path: no such file or folder: {exp.dataset.path}")
    for i, j in enumerate(exp.judges):
        if j.rubrics is not None and not j.rubrics.is_file():
            raise ScieraError(f"{source}: judges[{i}].rubrics: no such file: {j.rubrics}")
    needs_corpus = [i for i, p in enumerate(exp.pipelines) if p.retriever != CANDIDATES]
    if needs_corpus and exp.corpus is None:
        i = needs_corpus[0]
        raise ScieraError(
            f"{source}: corpus: required by pipelines[{i}].retriever "
            f"{exp.pipelines[i].retriever!r} (or use retriever: candidates)"
        )
    if exp.dataset.subcorpus is not None and not needs_corpus:
        raise ScieraError(f"{source}: dataset.subcorpus: no pipeline searches a corpus")
    if needs_corpus and exp.corpus is not None and not exp.corpus.is_dir():
        raise ScieraError(f"{source}: corpus: no such folder: {exp.corpus}")


def parse_experiment(data: Any, source: str, base_dir: Path | None = None) -> Experiment:
    """Validate a loaded mapping; relative paths are resolved against ``base_dir``."""
    if not isinstance(data, dict):
        raise ScieraError(f"{source}: expected a mapping at the top level")
    try:
        exp = Experiment.model_validate(data)
    except ValidationError as exc:
        where, msg, extra = first_problem(exc)
        if msg.startswith("[") and "]: " in msg:  # an item of a list field: metrics[1]
            index, _, msg = msg.partition(": ")
            where += index
        raise ScieraError(f"{source}: {where or 'experiment'}: {msg}{extra}") from None
    if base_dir is not None:
        ds = exp.dataset.model_copy(update={"path": base_dir / exp.dataset.path})
        corpus = base_dir / exp.corpus if exp.corpus is not None else None
        judges = [
            j.model_copy(update={"rubrics": base_dir / j.rubrics}) if j.rubrics else j
            for j in exp.judges
        ]
        exp = exp.model_copy(update={"dataset": ds, "corpus": corpus, "judges": judges})
    _check_paths(exp, source)
    return exp


def load_experiment(path: str | Path) -> Experiment:
    """Read and validate an experiment YAML file (errors name the file and the field)."""
    path = Path(path)
    return parse_experiment(read_yaml(path), str(path), path.resolve().parent)
