"""make_llm: explicit backend names, cache wrapping, and errors before any model loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciera.errors import ScieraError
from sciera.llm.base import LLM
from sciera.llm.cache import CachedLLM
from sciera.llm.openai_compat import OpenAICompatLLM
from sciera.llm.registry import BACKENDS, make_backend, make_llm
from sciera.settings import load_settings

URL = "http://127.0.0.1:9/v1"  # never contacted: building a client sends no request


def test_backends_are_named_explicitly() -> None:
    assert sorted(BACKENDS) == ["llamacpp", "openai"]


def test_openai_backend_wrapped_in_cache_under_home(tmp_path: Path) -> None:
    settings = load_settings(
        home=tmp_path, llm={"backend": "openai", "base_url": URL, "model": "m"}
    )
    llm = make_llm(settings)
    assert isinstance(llm, CachedLLM)
    assert isinstance(llm.inner, OpenAICompatLLM)
    assert isinstance(llm, LLM)
    assert llm.model_id == f"openai:{URL}:m"
    assert (tmp_path / "llm-cache.sqlite").is_file()


def test_cache_off_returns_the_bare_backend(tmp_path: Path) -> None:
    settings = load_settings(
        home=tmp_path, llm={"backend": "openai", "base_url": URL, "model": "m", "cache": False}
    )
    assert isinstance(make_llm(settings), OpenAICompatLLM)
    assert not (tmp_path / "llm-cache.sqlite").exists()


def test_openai_without_url_is_refused(tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path, llm={"backend": "openai", "base_url": None})
    with pytest.raises(ScieraError, match="SCIERA_LLM__BASE_URL"):
        make_backend(settings)


def test_llamacpp_with_unknown_model_fails_before_loading(tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path, llm={"backend": "llamacpp", "model": "no-such-model"})
    with pytest.raises(ScieraError, match="neither a registered name"):
        make_llm(settings)
    assert not (tmp_path / "llm-cache.sqlite").exists()
