"""A first run's slow work done once (LLM weights assembled and hashed, a cross-encoder's
int8 ONNX export) is announced in one line on stderr instead of a silent pause; warnings
keep to the root handler's form."""

from __future__ import annotations

import io
import logging

import pytest

from sciera.cli import ONE_TIME_WORK, show_one_time_work


def test_one_time_work_is_announced_in_one_line_and_nothing_else_is(monkeypatch):
    for name in ONE_TIME_WORK:
        logger = logging.getLogger(name)
        # import-linter's run in this process (test_architecture.py) disables loggers
        monkeypatch.setattr(logger, "disabled", False)
        monkeypatch.setattr(logger, "level", logger.level)
        monkeypatch.setattr(logger, "handlers", list(logger.handlers))
    stream = io.StringIO()
    show_one_time_work(stream)
    from sciera.llm import weights
    from sciera.rerank import onnx_int8

    onnx_int8.log.info("exporting %s to int8 ONNX at %s (once per model)", "ce", "cache/x")
    weights.log.info("assembling %s from %d parts into %s", "qwen", 2, "models/q.gguf")
    weights.log.warning("a warning")  # the root handler's
    weights.log.debug("a detail")
    logging.getLogger("sciera.retrieve").info("not one-time work")
    assert stream.getvalue().splitlines() == [
        "sciera: exporting ce to int8 ONNX at cache/x (once per model)",
        "sciera: assembling qwen from 2 parts into models/q.gguf",
    ]


@pytest.mark.parametrize("name", ONE_TIME_WORK)
def test_the_announcing_loggers_are_the_modules_own(name):
    import importlib

    assert importlib.import_module(name).log.name == name
