"""Training recipes: a YAML file validated by one pydantic model per trained kind.

Shared by every ``sciera train KIND RECIPE.yaml [--set key=value ...]``:

- :class:`Recipe`, the base of each kind's model: unknown keys are rejected and the
  recipe is frozen;
- :func:`load_recipe`: read the YAML, apply ``--set a.b=value`` overrides (the value is read
  as YAML: ``2``, ``true``, ``null``, ``[a, b]``; a number in the path indexes a list:
  ``ingredients.0.epochs=2``), validate, and read every relative :class:`~pathlib.Path`
  field relative to the YAML file's folder; any error is one line
  ``file: field.path: problem``;
- :class:`StageLog` and :func:`run_stages`: which stages of a run are done and with what
  settings, so a rerun skips them and a changed stage runs again, with every stage after it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from sciera.errors import ScieraError
from sciera.yamlfile import first_problem, read_yaml


class Recipe(BaseModel):
    """Base of a recipe's models (and of their parts): unknown keys are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)


R = TypeVar("R", bound=BaseModel)
_FIELD_PATH = re.compile(r"^([A-Za-z_][\w.\[\]]*): (.+)$", re.S)


def partial(model: type[Recipe]) -> type[Recipe]:
    """``model`` with every field optional (``None``: not given, the base's value stays),
    its constraints kept: a part of a recipe that overrides some fields of another
    (:func:`merged`), e.g. one ingredient's training settings."""
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        ann = Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
        fields[name] = (ann | None, Field(None, description=info.description))
    return create_model(f"Partial{model.__name__}", __base__=Recipe, **fields)


def merged(base: R, part: BaseModel) -> R:
    """``base`` with the fields ``part`` (a :func:`partial` of its model) gives, validated
    as a whole."""
    return type(base).model_validate({**dict(base), **part.model_dump(exclude_none=True)})


def _step(node: Any, key: str, source: str, assignment: str) -> tuple[Any, str | int]:
    if isinstance(node, list):
        if not key.isdigit() or int(key) >= len(node):
            raise ScieraError(f"{source}: --set {assignment}: no item {key} in that list")
        return node, int(key)
    if not isinstance(node, dict):
        raise ScieraError(f"{source}: --set {assignment}: {key!r} is inside a value, not a mapping")
    return node, key


def apply_sets(data: dict[str, Any], sets: Sequence[str], source: str) -> dict[str, Any]:
    """``data`` with each ``a.b=value`` applied (a copy; missing mappings are made)."""
    data = json.loads(json.dumps(data, default=str))
    for assignment in sets:
        path, sep, text = assignment.partition("=")
        keys = path.strip().split(".")
        if not sep or not all(k.strip() for k in keys):
            raise ScieraError(f"{source}: --set {assignment}: expected key.path=value")
        try:
            value = yaml.safe_load(text) if text.strip() else ""
        except yaml.YAMLError as exc:
            raise ScieraError(
                f"{source}: --set {assignment}: not a YAML value: {str(exc).splitlines()[0]}"
            ) from None
        node: Any = data
        for key in keys[:-1]:
            node, k = _step(node, key.strip(), source, assignment)
            if isinstance(k, str) and not isinstance(node.get(k), dict | list):
                node[k] = {}
            node = node[k]
        node, k = _step(node, keys[-1].strip(), source, assignment)
        node[k] = value
    return data


def _resolved(value: Any, base_dir: Path) -> Any:
    if isinstance(value, Path):
        return value if value.is_absolute() else Path(os.path.normpath(base_dir / value))
    if isinstance(value, BaseModel):
        return value.model_copy(
            update={
                name: _resolved(getattr(value, name), base_dir) for name in type(value).model_fields
            }
        )
    if isinstance(value, tuple | list):
        return type(value)(_resolved(v, base_dir) for v in value)
    if isinstance(value, dict):
        return {k: _resolved(v, base_dir) for k, v in value.items()}
    return value


def parse_recipe(
    model: type[R],
    data: Any,
    source: str,
    base_dir: Path | None = None,
    sets: Sequence[str] = (),
) -> R:
    """Validate a loaded mapping (after ``sets``); relative paths against ``base_dir``."""
    if not isinstance(data, dict):
        raise ScieraError(f"{source}: expected a mapping at the top level")
    data = apply_sets(data, sets, source)
    try:
        recipe = model.model_validate(data)
    except ValidationError as exc:
        at, msg, extra = first_problem(exc)
        if not at and (m := _FIELD_PATH.match(msg)):  # a whole-recipe check names its field
            at, msg = m.groups()
        raise ScieraError(f"{source}: {at or 'recipe'}: {msg}{extra}") from None
    return _resolved(recipe, base_dir) if base_dir is not None else recipe


def load_recipe(model: type[R], path: str | Path, sets: Sequence[str] = ()) -> R:
    """Read, override (``--set``) and validate a recipe YAML file; errors are one line
    naming the file and the field."""
    path = Path(path)
    return parse_recipe(model, read_yaml(path), str(path), path.resolve().parent, sets)


def settings_key(settings: Any) -> str:
    """A short hash of a stage's settings (a pydantic model, dataclass or plain data)."""
    if isinstance(settings, BaseModel):
        settings = settings.model_dump(mode="json")
    blob = json.dumps(settings, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


class StageLog:
    """The stages of one run done so far, in order, each with its settings' key
    (a JSON file, rewritten after each stage). A stage is done when it is logged with the
    same key and every stage before it is done; a stage run again drops the ones after it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._done: list[list[str]] = (
            json.loads(path.read_text())["stages"] if path.is_file() else []
        )
        self._upto = 0  # how many logged stages matched so far in this run

    def done(self, name: str, key: str) -> bool:
        if self._upto < len(self._done) and self._done[self._upto] == [name, key]:
            self._upto += 1
            return True
        return False

    def record(self, name: str, key: str) -> None:
        self._done = [*self._done[: self._upto], [name, key]]
        self._upto = len(self._done)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"stages": self._done}, indent=1) + "\n")
        tmp.replace(self.path)


@dataclass(frozen=True)
class Stage:
    """One resumable step of a recipe's run: its name, the settings its log key hashes
    and its work."""

    name: str
    settings: Any
    run: Callable[[], Any]


def stage_log(model_dir: Path) -> Path:
    """Where a recipe's run logs its stages: beside the model folder
    (``<model dir>.recipe.json``)."""
    return model_dir.with_name(model_dir.name + ".recipe.json")


def recorded(stage: Stage, record: dict[str, Any]) -> Stage:
    """``stage`` that, once run, adds ``record`` (:func:`recipe_record`) and the stage's
    name to the card of the model it wrote (its result's ``model_dir`` and ``card``)."""

    def run() -> Any:
        result = stage.run()
        record_in_card(result.model_dir, result.card, {**record, "stage": stage.name})
        return result

    return Stage(stage.name, stage.settings, run)


def run_stages(stages: Sequence[Stage], log: StageLog, say: Callable[[str], None]) -> list[Any]:
    """Run ``stages`` in order, each skipped when ``log`` has it done with the same
    settings (and every stage before it); what each stage run returned."""
    results = []
    for stage in stages:
        key = settings_key(stage.settings)
        if log.done(stage.name, key):
            say(f"{stage.name}: done before with these settings, skipped")
            continue
        say(f"{stage.name}: ...")
        results.append(stage.run())
        log.record(stage.name, key)
    return results


def recipe_record(path: str | Path, sets: Sequence[str] = ()) -> dict[str, Any]:
    """What a model card records of the recipe that made it: the file's path (as typed),
    the ``--set`` overrides and the file's content (the YAML mapping as written)."""
    content = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    return {"path": str(path), "set": list(sets), "content": content}


def record_in_card(model_dir: Path, card: dict[str, Any], record: dict[str, Any]) -> None:
    """Add ``record`` (:func:`recipe_record` and the stage) to a written model's card as
    ``recipe``; its rendering and manifest follow."""
    from sciera.artifacts.card import write_card
    from sciera.artifacts.manifest import write_manifest

    card["recipe"] = record
    write_card(model_dir, card)
    write_manifest(model_dir)
