"""Plain-text view of one question and its contexts, laid out like the paper's Figure 8."""

from __future__ import annotations

from collections.abc import Sequence

from sciera.types import QAInstance


def _shorten(text: str, limit: int | None) -> str:
    text = " ".join(text.split())
    if limit is None or len(text) <= limit:
        return text
    return text[: max(0, limit - 3)].rstrip() + "..."


def find_instances(instances: Sequence[QAInstance], wanted: str) -> list[QAInstance]:
    """Instances whose id is ``wanted``, or all settings of question id ``wanted``."""
    exact = [i for i in instances if i.id == wanted]
    if exact:
        return exact
    return [i for i in instances if i.id.rsplit("/", 1)[0] == wanted]


def format_instances(instances: Sequence[QAInstance], max_chars: int | None = 300) -> str:
    """Question, golden answer, then each setting's passages with gold/distractor marks."""
    if not instances:
        return ""
    first = instances[0]
    lines = [
        f"Question: {first.question}",
        f"Golden Answer: {first.answer or '(none)'}",
        f"Gold passage ids: {', '.join(first.gold_passage_ids)}",
    ]
    prov = first.provenance
    if prov.get("source_doc"):
        lines.append(f"Source: {prov.get('source_doc')} ({prov.get('mode', '')})")
    gold = set(first.gold_passage_ids)
    for inst in instances:
        lines.append("")
        lines.append(f"Context ({inst.setting.upper() if inst.setting == 'ssli' else 'Base'}):")
        for n, cand in enumerate(inst.candidates, start=1):
            mark = "GOLD" if cand.passage_id in gold else ""
            if cand.is_distractor:
                mark = f"DISTRACTOR:{cand.distractor_type or '?'}"
            tag = f" [{mark}]" if mark else ""
            lines.append(
                f"- Passage {n}{tag} ({cand.passage_id}): {_shorten(cand.text, max_chars)}"
            )
    return "\n".join(lines)
