"""Build the configured LLM: an explicit backend name -> builder registry.

``llamacpp`` resolves ``settings.llm.model`` (a registered name or a ``.gguf`` path) to a
verified file under ``settings.home`` and loads it in-process; ``openai`` talks to an
OpenAI-compatible server at ``settings.llm.base_url``. With ``settings.llm.cache`` the
backend is wrapped in the persistent response cache ``<home>/llm-cache.sqlite``. Backends
are imported only when built.
"""

from __future__ import annotations

from collections.abc import Callable

from sciera.errors import ScieraError
from sciera.llm.base import LLM
from sciera.settings import Settings

CACHE_FILE = "llm-cache.sqlite"


def _llamacpp(settings: Settings) -> LLM:
    from sciera.llm.llamacpp import LlamaCppLLM
    from sciera.llm.weights import resolve_model

    cfg = settings.llm
    model = resolve_model(cfg.model, settings.home)
    return LlamaCppLLM(
        model.path,
        model_id=f"llamacpp:{model.model_id}",
        n_ctx=cfg.n_ctx,
        threads=cfg.threads,
        seed=cfg.seed,
        extra_buffers=cfg.extra_buffers,
        prefix_reuse=cfg.prefix_reuse,
    )


def _openai(settings: Settings) -> LLM:
    from sciera.llm.openai_compat import OpenAICompatLLM

    cfg = settings.llm
    if not cfg.base_url:
        raise ScieraError(
            "the openai LLM backend needs a server URL: set llm.base_url "
            "(SCIERA_LLM__BASE_URL=http://127.0.0.1:8000/v1)"
        )
    return OpenAICompatLLM(
        cfg.base_url,
        cfg.model,
        api_key=cfg.api_key,
        timeout=cfg.timeout,
        retries=cfg.retries,
        concurrency=cfg.concurrency,
        seed=cfg.seed,
    )


BACKENDS: dict[str, Callable[[Settings], LLM]] = {
    "llamacpp": _llamacpp,
    "openai": _openai,
}


def make_backend(settings: Settings) -> LLM:
    """The configured backend on its own, without the response cache."""
    name = settings.llm.backend
    try:
        build = BACKENDS[name]
    except KeyError:
        raise ScieraError(
            f"unknown LLM backend {name!r}; choose one of {sorted(BACKENDS)}"
        ) from None
    return build(settings)


def make_llm(settings: Settings) -> LLM:
    """The configured backend, wrapped in the response cache when ``llm.cache`` is on."""
    inner = make_backend(settings)
    if not settings.llm.cache:
        return inner
    from sciera.llm.cache import CachedLLM

    return CachedLLM(inner, cache_path=settings.home / CACHE_FILE)
