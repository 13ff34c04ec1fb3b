"""Embedded LLM backend on llama-cpp-python (``pip install 'sciera[llm]'``).

One ``Llama`` instance per :class:`LlamaCppLLM`, guarded by a lock so several threads may
share it (calls run one at a time). Prompts are rendered with the chat template stored in
the GGUF file, the same template ``create_chat_completion`` uses, so every method sees the
same prompt text. Consecutive calls reuse the KV cache for the longest common token prefix
with the previous call: put the shared part (system prompt, question) first and the
varying part (passage) last.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sciera.errors import ScieraError, require
from sciera.llm.base import ChoiceProbs, Completion, JSONResult, Message
from sciera.llm.llamacpp_buffers import (
    ExtraBuffers,
    model_params_override,
    system_info,
    use_extra_buffers,
)
from sciera.llm.parsing import json_result
from sciera.llm.schema import grammar_schema

log = logging.getLogger(__name__)

TokenSeq = tuple[int, ...]

# A fixed text of about 250 tokens for throughput measurements (``sciera llm check``).
SPEED_PROMPT = (
    "Vitamin D is a fat-soluble secosteroid that the skin synthesizes under ultraviolet B "
    "light and that the liver and kidneys convert into its active hormonal form, calcitriol. "
    "Calcitriol binds the vitamin D receptor, a nuclear transcription factor expressed in "
    "bone, intestine, kidney and many immune cells, and regulates calcium and phosphate "
    "absorption as well as the expression of hundreds of genes. Observational studies have "
    "linked low serum 25-hydroxyvitamin D concentrations to a higher risk of fractures, "
    "cardiovascular events, autoimmune disease and some cancers, but randomized controlled "
    "trials of supplementation have mostly reported small or null effects on these outcomes. "
    "Possible explanations include reverse causation, since chronic illness reduces time "
    "spent outdoors, confounding by obesity and physical activity, and trial designs that "
    "enrolled participants who were not deficient at baseline. Mendelian randomization "
    "studies that use genetic variants affecting vitamin D metabolism as instruments offer a "
    "way around confounding, and several of them support a causal role in multiple sclerosis "
    "while finding little evidence for cardiovascular disease. Summarize the strongest "
    "evidence for a causal effect and explain why observational and trial results differ."
)


@dataclass(frozen=True, slots=True)
class SpeedReport:
    """Throughput of one prompt evaluation and one greedy generation run."""

    prompt_tokens: int
    prompt_seconds: float
    gen_tokens: int
    gen_seconds: float

    @property
    def prompt_tps(self) -> float:
        return self.prompt_tokens / self.prompt_seconds if self.prompt_seconds else 0.0

    @property
    def gen_tps(self) -> float:
        return self.gen_tokens / self.gen_seconds if self.gen_seconds else 0.0


def choice_probabilities(
    sequences: Mapping[str, TokenSeq],
    next_logprobs: Callable[[TokenSeq], np.ndarray],
) -> tuple[dict[str, float], float]:
    """Probability of each choice from next-token log-probabilities; returns (probs, raw_mass).

    The choices' token sequences form a trie. ``next_logprobs(prefix)`` gives the
    log-probabilities of the token after the prompt plus ``prefix``; it is called once for
    the empty prefix and once per inner node that a longer choice passes through. A choice
    is the product of its tokens' probabilities. A choice that is a strict prefix of another
    (grade "1" vs "10", tokenized "1","0") keeps only the share of its mass that does NOT
    continue towards the longer choice: P("1") = P(1)·(1 − P(0 | 1)), P("10") = P(1)·P(0 | 1).
    ``probs`` is normalized to sum to 1; ``raw_mass`` is the sum before normalization.
    """
    raw: dict[str, float] = {}

    def visit(prefix: TokenSeq, mass: float) -> None:
        depth = len(prefix)
        below = [s for s in sequences.values() if len(s) > depth and s[:depth] == prefix]
        lp = next_logprobs(prefix)
        children = sorted({s[depth] for s in below})
        p_child = {t: math.exp(float(lp[t])) for t in children}
        for choice, seq in sequences.items():
            if seq == prefix:
                raw[choice] = mass * max(0.0, 1.0 - sum(p_child.values()))
        for t in children:
            child = (*prefix, t)
            if any(len(s) > depth + 1 and s[: depth + 1] == child for s in below):
                visit(child, mass * p_child[t])
            else:
                for choice, seq in sequences.items():
                    if seq == child:
                        raw[choice] = mass * p_child[t]

    visit((), 1.0)
    total = sum(raw.values())
    if total <= 0.0:
        log.warning("choices have zero probability mass; returning a uniform distribution")
        return {c: 1.0 / len(sequences) for c in sequences}, 0.0
    return {c: raw[c] / total for c in sequences}, total


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    x = logits.astype(np.float64)
    m = x.max()
    return x - (m + np.log(np.exp(x - m).sum()))


class LlamaCppLLM:
    """The :class:`~sciera.llm.base.LLM` protocol on a local GGUF model.

    ``threads`` sets both ``n_threads`` (generation) and ``n_threads_batch`` (prompt).
    Calls with ``temperature=0`` are greedy and deterministic; sampling uses ``seed``.
    ``prefix_reuse=False`` clears the KV cache before every call, so an answer does not
    depend on the calls before it (``llm.prefix_reuse``; slower).
    ``extra_buffers`` (auto | on | off) governs llama.cpp's weight repacking; ``auto`` is
    off on CPUs with AMX, whose kernels crashed here (see :mod:`sciera.llm.llamacpp_buffers`).
    The resolved choice is the ``extra_buffers`` attribute.

    llama.cpp's CPU kernels are not batch-invariant: evaluating a prompt in different
    pieces (which prefix reuse does, depending on the previous call) moves probabilities by
    up to about 0.03 on near-ties (measured on the 1.5B Q4_K_M). A given sequence of calls
    is reproducible, and the response cache keeps the first answer.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        model_id: str,
        n_ctx: int = 4096,
        threads: int = 2,
        seed: int = 0,
        n_batch: int = 512,
        prefix_reuse: bool = True,
        extra_buffers: ExtraBuffers = "auto",
    ) -> None:
        llama_cpp = require("llama_cpp", "llm")
        chat_format = require("llama_cpp.llama_chat_format", "llm")
        self._model_id = model_id
        self._seed = seed
        self._prefix_reuse = prefix_reuse
        self._lock = threading.RLock()
        self._evaluated = 0
        self._llama_cpp = llama_cpp
        self.extra_buffers = use_extra_buffers(extra_buffers, system_info(llama_cpp))
        try:
            with model_params_override(llama_cpp, use_extra_bufts=self.extra_buffers):
                self._llama = llama_cpp.Llama(
                    model_path=os.fspath(model_path),
                    n_ctx=n_ctx,
                    n_batch=min(n_batch, n_ctx),
                    n_threads=threads,
                    n_threads_batch=threads,
                    seed=seed,
                    logits_all=False,
                    verbose=False,
                )
        except ValueError as exc:  # llama-cpp-python's "Failed to load model from file"
            raise ScieraError(f"{model_path}: llama.cpp could not load the model: {exc}") from exc
        template = self._llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise ScieraError(f"{model_path}: the GGUF file has no chat template in its metadata")
        # Make create_chat_completion use exactly this template too (not a guessed format).
        self._llama.chat_format = "chat_template.default"
        self._formatter = chat_format.Jinja2ChatFormatter(
            template=template,
            eos_token=self._token_text(self._llama.token_eos()),
            bos_token=self._token_text(self._llama.token_bos()),
            add_generation_prompt=True,
        )

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def n_ctx(self) -> int:
        return int(self._llama.n_ctx())

    @property
    def evaluated_tokens(self) -> int:
        """Prompt tokens actually run through the model so far (reused prefixes excluded)."""
        return self._evaluated

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` on its own (for truncating passages to a budget)."""
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def close(self) -> None:
        """Free the model and its context now (instead of at garbage collection)."""
        with self._lock:
            self._llama.close()

    def __enter__(self) -> LlamaCppLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- protocol -----------------------------------------------------------------------
    def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
    ) -> Completion:
        return self._chat(messages, max_tokens=max_tokens, temperature=temperature, stop=stop)

    def complete_json(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any],
        *,
        max_tokens: int = 512,
    ) -> JSONResult:
        """Generation constrained by a grammar built from the JSON schema (string length
        limits left out of the grammar, see :func:`~sciera.llm.schema.grammar_schema`), then
        validated against the full schema; never raises for a bad reply (e.g. cut off at
        ``max_tokens``, or too long): returns a ParseFailure instead."""
        fmt = {"type": "json_object", "schema": grammar_schema(schema)}
        completion = self._chat(
            messages, max_tokens=max_tokens, temperature=0.0, stop=None, response_format=fmt
        )
        return json_result(completion, schema)

    def choice_logprobs(self, messages: Sequence[Message], choices: Sequence[str]) -> ChoiceProbs:
        """Probabilities of short answers from the logits after the opened assistant turn.

        The prompt (chat template with the generation prompt) is evaluated once, reusing the
        KV cache for the prefix shared with the previous call; the last-token logits are
        log-softmaxed. Multi-token choices are scored exactly, see
        :func:`choice_probabilities`: for grades "0".."10" one extra token ("1") is
        evaluated to split P("1") between "1" and "10". ``raw_mass`` is the total probability
        of the choices before normalization (low = the model wanted to say something else).
        """
        if not choices:
            raise ValueError("choices must not be empty")
        if len(set(choices)) != len(choices):
            raise ValueError(f"duplicate choices: {list(choices)}")
        with self._lock:
            start = time.perf_counter()  # inside the lock: waiting for other threads is not cost
            prompt, tokens = self._render(messages)
            seqs = {c: self._choice_tokens(prompt, tokens, c) for c in choices}
            if len(set(seqs.values())) != len(seqs):
                raise ValueError(f"choices tokenize identically: {seqs}")
            depth = max(len(s) for s in seqs.values())
            self._check_fits(len(tokens) + depth - 1, 0)
            self._eval_prompt(tokens)
            base = len(tokens)

            def next_logprobs(prefix: TokenSeq) -> np.ndarray:
                if prefix:
                    self._llama.n_tokens = base + len(prefix) - 1
                    self._llama.eval([prefix[-1]])
                return self._last_logprobs()

            probs, raw_mass = choice_probabilities(seqs, next_logprobs)
        return ChoiceProbs(
            probs=probs,
            prompt_tokens=len(tokens),
            seconds=time.perf_counter() - start,
            raw_mass=raw_mass,
        )

    # -- diagnostics --------------------------------------------------------------------
    def measure_speed(self, prompt: str = SPEED_PROMPT, *, gen_tokens: int = 32) -> SpeedReport:
        """Prompt tokens/s (one batch evaluation from an empty cache) and generation
        tokens/s (``gen_tokens`` greedy steps of one token each), measured separately
        after a short untimed warm-up (first touch of the memory-mapped weights)."""
        with self._lock:
            tokens = self._tokenize_prompt(prompt)
            self._check_fits(len(tokens), gen_tokens)
            self._llama.reset()
            self._llama.eval(tokens[:8])
            self._llama.reset()
            t0 = time.perf_counter()
            self._llama.eval(tokens)
            t1 = time.perf_counter()
            for _ in range(gen_tokens):
                self._llama.eval([int(np.argmax(self._last_logits()))])
            t2 = time.perf_counter()
            self._evaluated += len(tokens) + gen_tokens
        return SpeedReport(len(tokens), t1 - t0, gen_tokens, t2 - t1)

    # -- internals ----------------------------------------------------------------------
    def _token_text(self, token: int) -> str:
        if token < 0:
            return ""
        return self._llama.detokenize([token], special=True).decode("utf-8", errors="replace")

    def _tokenize_prompt(self, text: str) -> list[int]:
        # Same flags as llama-cpp-python's chat handler: the template adds special tokens.
        return self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def _render(self, messages: Sequence[Message]) -> tuple[str, list[int]]:
        result = self._formatter(
            messages=[{"role": m.role, "content": m.content} for m in messages]
        )
        return result.prompt, self._tokenize_prompt(result.prompt)

    def _choice_tokens(self, prompt: str, prompt_tokens: list[int], choice: str) -> TokenSeq:
        """Tokens of ``choice`` as they follow the prompt (falls back to standalone)."""
        if not choice:
            raise ValueError("empty choice")
        n = len(prompt_tokens)
        full = self._tokenize_prompt(prompt + choice)
        if full[:n] == prompt_tokens and len(full) > n:
            return tuple(full[n:])
        return tuple(self._llama.tokenize(choice.encode("utf-8"), add_bos=False, special=False))

    def _reusable_prefix(self, tokens: list[int]) -> int:
        """Tokens at the start of ``tokens`` already in the KV cache (at most len - 1, so the
        last token is always evaluated and its logits are fresh)."""
        if not self._prefix_reuse:
            return 0
        limit = min(self._llama.n_tokens, len(tokens) - 1)
        same = self._llama.input_ids[:limit] == np.asarray(tokens[:limit])
        return limit if same.all() else int(np.argmin(same))

    def _eval_prompt(self, tokens: list[int]) -> None:
        reuse = self._reusable_prefix(tokens)
        self._llama.n_tokens = reuse  # eval() drops KV entries from n_tokens on
        self._llama.eval(tokens[reuse:])
        self._evaluated += len(tokens) - reuse

    def _last_logits(self) -> np.ndarray:
        ptr = self._llama_cpp.llama_get_logits_ith(self._llama.ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(self._llama.n_vocab(),)).copy()

    def _last_logprobs(self) -> np.ndarray:
        return _log_softmax(self._last_logits())

    def _check_fits(self, prompt_tokens: int, new_tokens: int) -> None:
        if prompt_tokens + max(new_tokens, 1) > self.n_ctx:
            raise ScieraError(
                f"prompt of {prompt_tokens} tokens (+{new_tokens} to generate) does not fit the "
                f"context window of {self.n_ctx} tokens; shorten the passages or raise "
                "llm.n_ctx (SCIERA_LLM__N_CTX)"
            )

    def _chat(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] | None,
        response_format: Mapping[str, Any] | None = None,
    ) -> Completion:
        with self._lock:
            start = time.perf_counter()
            _, tokens = self._render(messages)
            self._check_fits(len(tokens), 1)
            if self._prefix_reuse:
                self._evaluated += len(tokens) - self._reusable_prefix(tokens)
            else:
                self._llama.reset()
                self._evaluated += len(tokens)
            response = self._llama.create_chat_completion(
                messages=[{"role": m.role, "content": m.content} for m in messages],
                max_tokens=max_tokens,
                temperature=temperature,
                stop=list(stop) if stop else None,
                seed=self._seed,
                response_format=dict(response_format) if response_format else None,
            )
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        return Completion(
            text=choice["message"].get("content") or "",
            prompt_tokens=int(usage.get("prompt_tokens", len(tokens))),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            seconds=time.perf_counter() - start,
            finish_reason=str(choice.get("finish_reason") or ""),
        )
