"""What a trained model was made from, read back from its card: the data spec it records
and the abstracts it trained on beyond the labels. Recalibration, model soups and the
calibration SSLI questions use these to rebuild the same dev split and to keep
calibration questions off everything a model has seen."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sciera.train.prepare import DataSpec, Prepared


def spec_from_card(card: dict[str, Any]) -> DataSpec:
    """The training data spec a card records (synthetic queries and SSLI negatives only
    shape the training side, so the dev split does not depend on them)."""
    data, cfg, excluded = card["data"], card["config"], card["splits"]["excluded"]
    return DataSpec(
        corpus=data["corpus"],
        queries=data["queries"],
        qrels=data["qrels"],
        retriever=cfg["retriever"],
        depth=cfg["depth"],
        dev_fraction=cfg["dev_fraction"],
        seed=cfg["seed"],
        max_queries=data.get("max_queries"),
        exclude_qrels=tuple(e["path"] for e in excluded if e["kind"] == "qrels"),
        exclude_ssli=tuple(e["path"] for e in excluded if e["kind"] == "ssli"),
        calibration_questions=int(cfg.get("calibration_questions", 0)),
        calibration_styles=tuple(cfg.get("calibration_styles", ("question",))),
        calibration_banned=tuple(data.get("calibration_banned", ())),
    )


def trained_beyond_labels(cards: Sequence[dict[str, Any]], data: Prepared) -> list[str]:
    """Abstracts the models of ``cards`` trained on besides the labels ``data`` holds: their
    synthetic queries' sources (re-picked from each card: same guard, dev split, count and
    seed) and their SSLI negatives' gold abstracts. Calibration questions stay off them."""
    from sciera.corpus import PassageStore
    from sciera.train import ssli_negatives, synthetic

    dev_gold = {d for r in data.dev for d in r.gold_docs}
    docs: set[str] = set()
    for card in cards:
        card_data, spec = card["data"], spec_from_card(card)
        n = int((card_data.get("synthetic") or {}).get("passages", 0))
        if n:
            with PassageStore.open(spec.corpus) as store:
                picked = synthetic.pick_sources(
                    store, data.guard.allowed_docs, dev_gold | data.guard.judged_docs, n, spec.seed
                )
            docs |= {p.split("#", 1)[0] for p in picked}
        paths = [s["path"] for s in card_data.get("ssli_negatives") or [] if "path" in s]
        if paths:
            ssli = ssli_negatives.load(paths, data.guard)
            docs |= {d for q in ssli.qrels.values() for d in q}
    return sorted(docs)
