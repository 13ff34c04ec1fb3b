"""Unit tests run without models: DeepEra grades with the (scripted) LLM, not the trained
cross-encoder that is the default scorer, and `ask` does not verify with the trained
verifier unless a test builds its verify stage with stand-ins."""

import pytest


@pytest.fixture(autouse=True)
def _llm_scorer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCIERA_DEEPERA__SCORER", "llm")
    monkeypatch.setenv("SCIERA_VERIFY__ENABLED", "false")


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in verification models (``verify_stand_ins``) by name in the registries:
    selector ``overlap``, verdict model ``keyword``."""
    from sciera.verify.registry import SELECTORS, VERDICTS

    monkeypatch.setitem(SELECTORS, "overlap", "verify_stand_ins:OverlapSelector")
    monkeypatch.setitem(VERDICTS, "keyword", "verify_stand_ins:KeywordVerdict")
