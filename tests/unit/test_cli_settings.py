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


def test_a_bad_setting_from_the_environment_is_one_line_from_any_command(tmp_path):
    import os
    import subprocess
    import sys

    run = [
        sys.executable,
        "-c",
        "import sys; from sciera.cli import main; sys.argv[0] = 'sciera'; main()",
    ]
    env = {**os.environ, "SCIERA_FILTER__TAU": "3"}
    out = subprocess.run(
        [*run, "search", "aspirin", "--corpus", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2
    assert out.stderr.strip() == (
        "error: setting filter.tau: Input should be less than or equal to 1 (got '3')"
    )


def _main_running(monkeypatch, app):
    """``sciera.cli`` with ``app`` as its command, and main()'s set-up of the process
    (logging, SIGTERM, the one-time-work lines, the commands) kept off this test process."""
    import logging

    import sciera.cli as cli

    for handler in logging.getLogger().handlers:
        monkeypatch.setattr(handler, "level", handler.level)
    monkeypatch.setattr(cli.logging, "basicConfig", lambda **kw: None)
    monkeypatch.setattr(cli.signal, "signal", lambda *args: None)
    monkeypatch.setattr(cli, "show_one_time_work", lambda: None)
    monkeypatch.setattr(cli, "_register", lambda: None)
    monkeypatch.setattr(cli, "app", app)
    return cli


def test_main_says_a_settings_error_from_any_command_in_one_line(monkeypatch, capsys):
    from sciera.settings import load_settings

    def command() -> None:  # a command that reads the settings itself, without the helper
        load_settings(None, filter={"tau": 3})

    cli = _main_running(monkeypatch, command)
    with pytest.raises(SystemExit) as done:
        cli.main()
    assert done.value.code == 2
    assert capsys.readouterr().err.strip() == (
        "error: setting filter.tau: Input should be less than or equal to 1 (got 3)"
    )

    def other() -> None:  # anything else is not dressed up as a settings error
        raise RuntimeError("boom")

    monkeypatch.setattr(cli, "app", other)
    with pytest.raises(RuntimeError, match="boom"):
        cli.main()


def test_an_interrupted_command_says_so_in_one_line_and_exits_130(monkeypatch, capsys):
    """Ctrl-C or SIGTERM (which main() turns into the same KeyboardInterrupt) in the middle
    of a command: Typer exits 130 without a word; main() adds one line saying that finished
    work is kept and the same command goes on. A normal end says nothing."""
    import typer

    app = typer.Typer()

    @app.command()
    def work(stop: bool = False) -> None:
        if stop:
            raise KeyboardInterrupt
        typer.echo("done")

    cli = _main_running(monkeypatch, app)
    monkeypatch.setattr("sys.argv", ["sciera", "--stop"])
    with pytest.raises(SystemExit) as done:
        cli.main()
    assert done.value.code == cli.INTERRUPTED == 130
    assert capsys.readouterr().err.splitlines() == [cli.INTERRUPTED_LINE]
    monkeypatch.setattr("sys.argv", ["sciera"])
    with pytest.raises(SystemExit) as done:
        cli.main()
    assert done.value.code == 0
    out = capsys.readouterr()
    assert out.out == "done\n" and out.err == ""
