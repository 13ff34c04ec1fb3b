"""A trained model's held-out questions, read from its model card.

    ids = held_out_ids("scifact-verifier", "scifact")          # its 93 dev claims
    ids = held_out_ids("verifier-cv2", "scifact", "cv_fold")   # the fold it left out
    ids = held_out_ids("scifact-verifier", "pubmedqa")         # its held-out PQA-L questions

``sciera train verifier`` records in its card (``data``) the ids of every split it kept
apart: ``dev_ids`` (whole claims carved from the training claims, never trained on),
``test_ids`` (the cross-validation fold left out, with ``--cv-fold``) and
``pubmedqa_held_ids`` (the PubMedQA fold its verdict head never saw). An experiment's
``dataset: {held_out_of: MODEL}`` keeps exactly those questions, so a model is measured on
what it never trained on without repeating how the split was drawn. The card is read
through :func:`sciera.artifacts.registry.open_model` (a shipped name, a model trained
under ``SCIERA_HOME/models``, or a folder).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from sciera.errors import ScieraError

HeldOut = Literal["dev", "cv_fold"]

HELD_OUT_KEYS: dict[str, dict[str, str]] = {
    "scifact": {"dev": "dev_ids", "cv_fold": "test_ids"},
    "pubmedqa": {"dev": "pubmedqa_held_ids"},
}
"""Dataset type -> split -> the card's ``data`` field holding that split's ids."""


def card_field(kind: str, held_out: str) -> str:
    """The card field of ``kind``'s ``held_out`` split; a one-line error for a pair the
    cards do not record."""
    by_split = HELD_OUT_KEYS.get(kind)
    if by_split is None:
        raise ScieraError(
            f"held_out_of: model cards record held-out questions of "
            f"{' and '.join(sorted(HELD_OUT_KEYS))} datasets, not {kind!r}"
        )
    if held_out not in by_split:
        raise ScieraError(
            f"held_out: a {kind} dataset's held-out split is {' or '.join(sorted(by_split))}, "
            f"not {held_out!r}"
        )
    return by_split[held_out]


def ids_from_card(card: Mapping, kind: str, held_out: str = "dev", model: str = "") -> list[str]:
    """The ids of ``card``'s ``held_out`` split for a ``kind`` dataset, in card order."""
    key = card_field(kind, held_out)
    ids = [str(i) for i in (card.get("data") or {}).get(key) or []]
    if not ids:
        raise ScieraError(f"held_out_of: {model or 'the model'}: its card has no {key}")
    return ids


def held_out_ids(
    model: str, kind: str, held_out: str = "dev", home: str | Path | None = None
) -> list[str]:
    """The ids ``model`` kept out of training for a ``kind`` dataset (see the module);
    ``home`` is where trained models are found (default: the settings' ``SCIERA_HOME``)."""
    from sciera.artifacts.registry import VERIFIER, open_model

    card_field(kind, held_out)  # an unknown pair fails before a model is opened
    if home is None:
        from sciera.settings import load_settings

        home = load_settings().home
    folder = open_model(VERIFIER, model, home)
    if folder.card is None:
        raise ScieraError(f"held_out_of: {model}: no model card in {folder.path}")
    return ids_from_card(folder.card, kind, held_out, model)
