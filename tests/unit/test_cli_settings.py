"""A bad setting, from an option, the environment or a preset, is one line naming the
option that sets it and the setting, with the value given; nothing runs."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from sciera.cli import _register, app
from sciera.cli.base import options_settings
from sciera.errors import ScieraError

_register()
runner = CliRunner()


def test_an_invalid_option_value_names_the_option_and_the_setting():
    options = {"filter.top_k": "--top-k"}
    with pytest.raises(ScieraError) as err:
        options_settings(None, {"filter": {"top_k": 0, "tau": None}}, options)
    assert str(err.value) == (
        "--top-k (setting filter.top_k): Input should be greater than or equal to 1 (got 0)"
    )
    # unset options are left out: the defaults stand
    assert options_settings(None, {"filter": {"top_k": None}}).filter.top_k >= 1
    with pytest.raises(ScieraError, match=r"^setting rerank.depth: .* \(got 0\)$"):
        options_settings(None, {"rerank": {"depth": 0}})
    with pytest.raises(ScieraError, match="unknown preset 'nope'"):
        options_settings("nope", {})


@pytest.mark.parametrize(
    ("args", "env", "want"),
    [
        (["verify", "a claim", "--corpus", "c", "--top-k", "0"], {}, "--top-k (setting verify"),
        (["ask", "a question?", "--corpus", "c", "--depth", "0"], {}, "--depth (setting rerank"),
        (["ask", "a question?", "--corpus", "c"], {"SCIERA_FILTER__TAU": "3"}, "(got '3')"),
        (["serve", "--corpus", "c"], {"SCIERA_LLM__N_CTX": "abc"}, "setting llm.n_ctx: "),
    ],
)
def test_the_commands_say_it_in_one_line(tmp_path, args, env, want):
    args = [str(tmp_path / a) if a == "c" else a for a in args]
    out = runner.invoke(app, args, env=env)
    # `sciera` prints a ScieraError as "error: <message>" and exits 2 (sciera.cli.main)
    assert isinstance(out.exception, ScieraError), out.output
    message = str(out.exception)
    assert "\n" not in message and want in message
