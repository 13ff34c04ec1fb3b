"""``sciera llm ...``: inspect the registered models and check the configured LLM."""

from __future__ import annotations

import time
from typing import Annotated, Any

import typer

from sciera.cli.base import app, options_settings

llm_app = typer.Typer(help="LLM backends: registered models and a speed/sanity check.")
app.add_typer(llm_app, name="llm")

_SANITY_QUESTION = "Is water made of hydrogen and oxygen?"


def _settings(preset: str | None, **llm: Any) -> Any:
    return options_settings(preset, {"llm": llm})


@llm_app.command("models")
def models(
    preset: Annotated[str | None, typer.Option(help="Settings preset (fast, quality).")] = None,
) -> None:
    """List the registered models, their part packages and whether they are assembled."""
    from sciera.llm.weights import locate_part, registered_models

    home = _settings(preset).home
    for spec in registered_models().values():
        installed = sum(locate_part(p) is not None for p in spec.parts)
        target = home / "models" / f"{spec.name}.gguf"
        typer.echo(f"{spec.name}  {spec.size / 1e9:.2f} GB  sha256 {spec.sha256[:12]}")
        typer.echo(f"  {spec.description}")
        typer.echo(
            f"  parts installed: {installed}/{len(spec.parts)} (pip install 'sciera[{spec.extra}]')"
        )
        typer.echo(f"  assembled: {target if target.exists() else 'no (on first use)'}")


@llm_app.command("check")
def check(
    model: Annotated[str | None, typer.Option(help="Registered name or .gguf path.")] = None,
    backend: Annotated[str | None, typer.Option(help="llamacpp or openai.")] = None,
    threads: Annotated[int | None, typer.Option(min=1, help="CPU threads (llamacpp).")] = None,
    base_url: Annotated[str | None, typer.Option(help="Server URL (openai backend).")] = None,
    preset: Annotated[str | None, typer.Option(help="Settings preset (fast, quality).")] = None,
    gen_tokens: Annotated[int, typer.Option(min=1, help="Tokens to generate.")] = 32,
) -> None:
    """Check the LLM: verified weights, load time, speed and a one-line sanity answer.

    Prompt and generation tokens/s are measured separately on a fixed ~230-token text;
    the response cache is bypassed.
    """
    from sciera.llm.base import Message
    from sciera.llm.registry import make_backend

    settings = _settings(
        preset, model=model, backend=backend, threads=threads, base_url=base_url, cache=False
    )
    cfg = settings.llm
    typer.echo(f"backend: {cfg.backend}")
    typer.echo(f"model: {cfg.model}")
    if cfg.backend == "llamacpp":
        from sciera.llm.weights import resolve_model

        resolved = resolve_model(cfg.model, settings.home)
        typer.echo(f"path: {resolved.path}")
        typer.echo(f"weights: {resolved.hash_status}")
        typer.echo(f"threads: {cfg.threads}")
    else:
        typer.echo(f"url: {cfg.base_url}")
    start = time.perf_counter()
    llm = make_backend(settings)
    typer.echo(f"model_id: {llm.model_id}")
    typer.echo(f"load: {time.perf_counter() - start:.2f} s")

    measure = getattr(llm, "measure_speed", None)
    if measure is not None:
        speed = measure(gen_tokens=gen_tokens)
        typer.echo(
            f"prompt: {speed.prompt_tokens} tokens in {speed.prompt_seconds:.2f} s = "
            f"{speed.prompt_tps:.1f} tok/s"
        )
        typer.echo(
            f"generation: {speed.gen_tokens} tokens in {speed.gen_seconds:.2f} s = "
            f"{speed.gen_tps:.1f} tok/s"
        )
    else:
        reply = llm.complete(
            [Message("user", "Count from one to twenty in words.")], max_tokens=gen_tokens
        )
        typer.echo(
            f"completion: {reply.prompt_tokens} prompt + {reply.completion_tokens} generated "
            f"tokens in {reply.seconds:.2f} s (the server does not report the phases apart)"
        )

    probs = llm.choice_logprobs(
        [Message("system", "Answer with yes or no."), Message("user", _SANITY_QUESTION)],
        ["yes", "no"],
    )
    verdict = "ok" if probs.probs["yes"] > 0.5 else "UNEXPECTED"
    typer.echo(
        f"choice_logprobs: {_SANITY_QUESTION!r} P(yes)={probs.probs['yes']:.3f} "
        f"P(no)={probs.probs['no']:.3f} raw_mass={probs.raw_mass:.3g} "
        f"({probs.seconds:.2f} s) {verdict}"
    )
