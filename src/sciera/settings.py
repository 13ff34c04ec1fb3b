"""One validated settings tree for the Python API, the CLI and SCIERA_* variables.

Precedence (highest first): explicit keyword arguments / CLI flags, environment
(``SCIERA_LLM__MODEL=...``, nested with ``__``), the named preset, defaults.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CorpusSettings(_Section):
    max_words: int = Field(250, ge=10, description="Passage length limit in words.")
    prepend_title: bool = Field(True, description="Prefix each passage with its title.")


class BM25Settings(_Section):
    k1: float = Field(0.9, gt=0, description="BM25 k1 (passages: 0.9; documents: 3.8).")
    b: float = Field(0.4, ge=0, le=1, description="BM25 b (passages: 0.4; documents: 0.87).")
    method: Literal["lucene", "robertson", "atire", "bm25l", "bm25+"] = "lucene"
    stemmer: str | None = Field("english", description="PyStemmer language, or None.")
    stopwords: str | None = Field("en", description="bm25s stopword list, or None.")
    mmap: bool = Field(
        False,
        description="Load the BM25 index memory-mapped (bm25s mmap): RAM stays near the "
        "pages queries touch; a load-time choice, not part of the index.",
    )


class EmbedSettings(_Section):
    backend: Literal["minilm", "scifact-minilm", "e5", "sentence-transformers"] = Field(
        "scifact-minilm",
        description="Embedder backend (see `sciera.embed.registry`): scifact-minilm is "
        "all-MiniLM-L6-v2 fine-tuned on SciFact train (shipped); minilm the original.",
    )
    model: str | None = Field(
        None, description="Model name or path for the sentence-transformers backend."
    )
    batch_size: int = Field(64, ge=1)
    cache: bool = Field(
        True,
        description="Reuse passage vectors across index builds (SCIERA_HOME/embeddings.sqlite).",
    )


class VectorSettings(_Section):
    backend: Literal["faiss", "qdrant"] = "faiss"
    qdrant_url: str | None = Field(
        None, description="Qdrant server URL; None = in-process local mode."
    )
    qdrant_api_key: str | None = None


class IndexSettings(_Section):
    engine: Literal["auto", "embedded", "qdrant"] = Field(
        "auto",
        description="embedded: bm25s + the vector index (vectors.backend); qdrant: one Qdrant "
        "collection holds dense and BM25 sparse vectors and the passages, and fuses hybrid "
        "search itself (server at vectors.qdrant_url, else in process: index.qdrant_local); "
        "auto: builds "
        "embedded, and opens qdrant when the corpus has only a qdrant index.",
    )
    qdrant_local: Literal["edge", "client"] = Field(
        "edge",
        description="The qdrant engine without a server (no vectors.qdrant_url): edge, "
        "Qdrant's Rust shard in process (qdrant-edge-py: HNSW and a sparse index), or "
        "client, qdrant-client's local mode (Python; every query scans the points).",
    )
    qdrant_hnsw_m: int = Field(
        16,
        ge=0,
        description="Links per node of the qdrant engine's HNSW graph (Qdrant's default "
        "16); 0 builds no graph: dense search is exact, only the sparse index is built.",
    )
    qdrant_hnsw_ef: int | None = Field(
        None,
        ge=1,
        description="The qdrant engine's dense search beam (HNSW ef) at query time: higher "
        "finds more of the exact neighbours, slower; None is Qdrant's default.",
    )
    qdrant_shards: int = Field(1, ge=1, description="Shards of the qdrant engine's collection.")
    qdrant_replication: int = Field(1, ge=1, description="Replicas of each shard (server).")


class RetrieveSettings(_Section):
    retriever: Literal["bm25", "dense", "hybrid"] = "hybrid"
    k: int = Field(10, ge=1)
    rrf_k: int = Field(60, ge=1, description="Reciprocal rank fusion constant.")
    fusion: Literal["rrf", "weighted"] = "rrf"
    weights: tuple[float, float] = Field(
        (1.0, 1.0), description="Weights of (bm25, dense) in fusion."
    )
    passage_depth: int = Field(
        100,
        ge=1,
        description="Passages each first-stage retriever returns at least: what a hybrid "
        "fuses, and what Max-P aggregates into documents (not the rerank depth).",
    )
    sections: tuple[str, ...] = Field(
        (),
        description="Keep only passages of these section kinds of full-text papers "
        "(abstract, introduction, methods, results, discussion, conclusions ...; an "
        "abstract-only document counts as abstract). Empty: every passage.",
    )


class LLMSettings(_Section):
    backend: Literal["llamacpp", "openai"] = "llamacpp"
    model: str = Field(
        "qwen2.5-coder-1.5b-instruct-q4_k_m",
        description="Registered model name, a GGUF path, or the server's model id.",
    )
    threads: int = Field(2, ge=1)
    n_ctx: int = Field(4096, ge=512)
    extra_buffers: Literal["auto", "on", "off"] = Field(
        "auto",
        description="llama.cpp weight repacking (CPU_REPACK/AMX buffers); auto = off on "
        "CPUs with AMX, where llama.cpp's AMX kernels crashed.",
    )
    prefix_reuse: bool = Field(
        True,
        description="Reuse llama.cpp's KV cache for the prompt prefix shared with the "
        "previous call (faster). false evaluates every prompt from scratch, so a greedy "
        "answer does not depend on the calls before it (llama.cpp's kernels are not "
        "batch-invariant): a Ray build then equals a build alone call for call.",
    )
    base_url: str | None = Field(None, description="OpenAI-compatible server URL.")
    api_key: str | None = None
    timeout: float = Field(120.0, gt=0, description="Seconds per request.")
    retries: int = Field(3, ge=0)
    concurrency: int = Field(4, ge=1)
    cache: bool = Field(True, description="Persistent response cache.")
    seed: int = 0


class RerankSettings(_Section):
    """The rerank stage: which reranker, over how many first-stage candidates."""

    reranker: str = Field("deepera", description="Reranker name (`sciera.rerank.registry`).")
    depth: int = Field(30, ge=1, description="First-stage candidates to rerank.")


class FilterSettings(_Section):
    """The filter stage: which reranked passages are kept as evidence (DeepEra step 3)."""

    tau: float = Field(
        0.8,
        ge=0,
        le=1,
        description="Keep passages whose calibrated P(relevant) is at least tau (applied to "
        "rerankers whose scores are calibrated probabilities; others keep their top_k).",
    )
    top_k: int | None = Field(5, ge=1, description="Passages kept at most (None: no limit).")
    use_tau: bool = Field(
        True, description="Apply tau (false: DeepEra ablation v2, only top_k applies)."
    )
    closest: int = Field(
        3,
        ge=0,
        le=20,
        description="When no passage is kept, a factoid or list question reads this many "
        "closest passages below tau (shown as such) and answers only with what they state "
        "verbatim, else refuses; 0: refuse whenever nothing is kept.",
    )


class DeepEraSettings(_Section):
    """The DeepEra reranking agent's own options (intent, scorer, guard)."""

    scorer: Literal["llm", "cross_encoder"] = Field(
        "cross_encoder",
        description="What scores relevance inside DeepEra: a trained cross-encoder's "
        "calibrated P(relevant) (default; the LLM writes the summaries of kept passages), or "
        "the LLM's grade (llm).",
    )
    scorer_model: str = Field(
        "scifact-minilm",
        description="The cross-encoder DeepEra's cross_encoder scorer loads (a shipped or "
        "trained name, or a path).",
    )
    use_intent: bool = Field(True, description="Recognise the intent first (ablation v1: off).")
    with_reason: bool = Field(False, description="Ask the LLM grader for a one-line reason.")
    max_words: int = Field(200, ge=10, description="Words of each passage the LLM reads.")
    guard: bool = Field(True, description="Drop passages that carry instructions to the grader.")
    prune: bool = Field(
        True,
        description="LLM scorer: skip grading passages the filter could not keep at any grade.",
    )


class CrossEncoderSettings(_Section):
    """Cross-encoder inference (the reranker and DeepEra's scorer)."""

    precision: Literal["auto", "fp32", "int8"] = Field(
        "auto",
        description="Cross-encoder inference: fp32 (torch), int8 (its ONNX export, quantized "
        "per channel, run by ONNX Runtime: faster on CPU, with calibrators fitted on its "
        "logits), or auto (int8 when the model's card has int8 calibrators and the CPU "
        "runs int8 faster: AVX-512 or VNNI on x86; else fp32).",
    )


class VerifySettings(_Section):
    """The verify stage: rationale sentences and a verdict per top-ranked abstract, the
    overall verdict (SUPPORT / CONTRADICT / NOT ENOUGH INFO / CONFLICTING)."""

    enabled: bool = Field(
        True,
        description="Verify claims and yes/no questions in `ask` (their decision comes from "
        "the verdict; other question types are not verified).",
    )
    model: str = Field(
        "scifact-verifier",
        description="The trained verifier (a shipped or trained name, or a path).",
    )
    selector: str = Field("trained", description="Rationale selector (sciera.verify.registry).")
    verdict: str = Field(
        "combined",
        description="Verdict model (sciera.verify.registry): 'combined' (the trained verdict "
        "head and the LLM's label probabilities, joined by the model's combiners: measured "
        "best), 'trained' (no LLM), 'llm' (the LLM alone).",
    )
    abstracts: int = Field(
        5, ge=1, le=50, description="Top-ranked abstracts read (reranked order, before tau)."
    )
    decider: bool = Field(
        True,
        description="Decide a yes/no question with the verifier's question decider when its "
        "model has one (the per-abstract verdicts and the LLM's reading of all the evidence "
        "at once, joined; with the combined verdict only); false: the abstracts' verdicts "
        "aggregated, as for a claim.",
    )
    quote_only: bool = Field(
        True,
        description="A verified claim or yes/no question's evidence is the kept passages "
        "with their rationale sentences quoted verbatim, without the evidence extractor's "
        "LLM summaries (a paraphrase can state as fact what a paper calls a hypothesis; it "
        "also saves the extractor's LLM calls). False: the extractor runs as for other "
        "questions.",
    )
    require_sentences: bool = Field(
        False,
        description="Refuse a corpus ingested before sentences were kept (`sciera verify` "
        "does: rationale indices must point into the stored abstracts); otherwise its "
        "passages are split into sentences.",
    )


class AnswerSettings(_Section):
    evidence: Literal["deepera", "rational", "vanilla", "full"] = Field(
        "deepera", description="Evidence extractor (see `sciera.evidence.registry`)."
    )
    question_type: Literal["auto", "yesno", "factoid", "list", "ideal"] = Field(
        "auto", description="Answer type; auto = detected from the question."
    )
    allow_maybe: bool = Field(
        True,
        description="Yes/no questions may be answered 'maybe' (with a verifier: when the "
        "evidence is indirect or conflicting; false forces the side it leans to).",
    )
    extractive: bool = Field(
        False, description="BioASQ 'style 3': prefer phrases copied from the evidence."
    )
    refuse_on_empty: bool = Field(
        True, description="Say the evidence is insufficient when no evidence survives."
    )
    refuse_on_insufficient: bool = Field(
        True, description="Also refuse when the extractor judged the evidence insufficient."
    )
    explain_yesno: bool | None = Field(
        None,
        description="Add LLM prose to yes/no answers (one more LLM call, about 6 s on 2 "
        "cores). Unset: only when the LLM made the decision (no verifier); a verifier's "
        "decision quotes the rationale sentences it rests on instead.",
    )
    decision_only: bool = Field(
        False,
        description="Yes/no questions and claims: the verifier's decision and its quoted "
        "rationale sentences, no LLM prose (no LLM call).",
    )
    yesno_prior: Literal["none", "content_free"] = Field(
        "none",
        description=(
            "Yes/no decision: raw choice probabilities, or divided by the model's answer "
            "prior on content-free inputs (contextual calibration; 3 cached LLM calls)."
        ),
    )
    max_words: int = Field(200, ge=10, description="Word limit of ideal (summary) answers.")
    passage_words: int = Field(
        200, ge=10, description="Words of each evidence passage shown to the LLM."
    )


class Settings(BaseSettings):
    """The whole configuration. Build with :func:`load_settings`."""

    model_config = SettingsConfigDict(
        env_prefix="SCIERA_", env_nested_delimiter="__", extra="forbid"
    )

    home: Path = Field(
        Path(os.path.expanduser("~/.cache/sciera")),
        description="Cache dir for assembled model weights and LLM response caches.",
    )
    corpus: CorpusSettings = CorpusSettings()
    bm25: BM25Settings = BM25Settings()
    embed: EmbedSettings = EmbedSettings()
    vectors: VectorSettings = VectorSettings()
    index: IndexSettings = IndexSettings()
    retrieve: RetrieveSettings = RetrieveSettings()
    llm: LLMSettings = LLMSettings()
    rerank: RerankSettings = RerankSettings()
    filter: FilterSettings = FilterSettings()
    deepera: DeepEraSettings = DeepEraSettings()
    cross_encoder: CrossEncoderSettings = CrossEncoderSettings()
    verify: VerifySettings = VerifySettings()
    answer: AnswerSettings = AnswerSettings()


PRESETS: dict[str, dict[str, Any]] = {
    "quality": {},
    "fast": {
        "llm": {"model": "qwen2.5-coder-0.5b-instruct-q4_k_m"},
        "rerank": {"depth": 10},
    },
}


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _env_overrides() -> dict[str, Any]:
    """Values set through SCIERA_* variables, as a nested dict."""
    return Settings().model_dump(exclude_defaults=True)


def load_settings(preset: str | None = None, **overrides: Any) -> Settings:
    """Defaults < preset < environment < explicit overrides (nested dicts allowed)."""
    if preset is not None and preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose one of {sorted(PRESETS)}")
    data = PRESETS.get(preset or "quality", {})
    data = _merge(data, _env_overrides())
    data = _merge(data, overrides)
    return Settings.model_validate(data)


def with_overrides(settings: Settings, overrides: dict[str, Any]) -> Settings:
    """``settings`` with ``overrides`` (nested dicts, as :func:`load_settings` takes) on top,
    validated again; the same object when there are none."""
    if not overrides:
        return settings
    return Settings.model_validate(_merge(settings.model_dump(), overrides))
