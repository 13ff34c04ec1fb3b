"""The files sciera keeps in a model folder, by name, and their atomic writes.

Beside the model's own files (weights, config, tokenizer) a folder trained by sciera holds
its card, the calibrators fitted on its dev split (fp32 logits and, once recalibrated for
them, the int8 export's), the log of its calibration questions, and the manifest of
everything in it. These names are part of the folder format: shipped folders and folders
trained before keep loading as they are.
"""

from __future__ import annotations

import os
from pathlib import Path

CARD_FILE = "sciera-card.json"
README_FILE = "README.md"  # the card rendered for people
CALIBRATOR_FILE = "sciera-calibrator.json"  # logit -> P(relevant)
FUSED_CALIBRATOR_FILE = "sciera-calibrator-fused.json"  # logit + first stage -> P(relevant)
CALIBRATOR_INT8_FILE = "sciera-calibrator-int8.json"
FUSED_CALIBRATOR_INT8_FILE = "sciera-calibrator-fused-int8.json"
CALIBRATOR_FILES: dict[str, tuple[str, str]] = {
    "fp32": (CALIBRATOR_FILE, FUSED_CALIBRATOR_FILE),
    "int8": (CALIBRATOR_INT8_FILE, FUSED_CALIBRATOR_INT8_FILE),
}
"""(calibrated, fused) calibrator files by the precision of the logits they were fitted on."""
CALIBRATION_QUESTIONS_FILE = "sciera-calibration-questions.jsonl.gz"  # what the calibrators saw
MANIFEST_FILE = "sciera-manifest.json"

NOT_SCORING = frozenset({README_FILE, CALIBRATION_QUESTIONS_FILE, MANIFEST_FILE})
"""Files that change nothing a model scores: left out of its identity
(:func:`sciera.artifacts.manifest.folder_digest`)."""


def write_atomic(path: str | Path, data: bytes | str) -> None:
    """Write ``path`` whole or not at all: a temporary file beside it, flushed to disk, then
    renamed over it (a crash leaves the old file or the new one, never half of one)."""
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as out:
        out.write(raw)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)
