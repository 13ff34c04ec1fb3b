"""Model folders are checked against their manifest before use: a changed, missing or
unlisted file refuses the folder with one line naming it; the shipped folders carry
manifests that match them; a model's identity leaves out what scores nothing."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from sciera.artifacts.files import (
    CALIBRATION_QUESTIONS_FILE,
    CARD_FILE,
    MANIFEST_FILE,
    README_FILE,
    write_atomic,
)
from sciera.artifacts.manifest import folder_digest, verify_folder, write_manifest
from sciera.artifacts.registry import SHIPPED
from sciera.errors import ScieraError


def _folder(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "config.json").write_text("{}")
    (root / "model.safetensors").write_bytes(b"weights")
    (root / "1_Pooling").mkdir()
    (root / "1_Pooling" / "config.json").write_text('{"pooling": "mean"}')
    (root / CARD_FILE).write_text('{"name": "m"}\n')
    (root / README_FILE).write_text("# m\n")
    return root


def test_a_manifest_lists_every_file_but_the_readme_and_itself(tmp_path):
    folder = _folder(tmp_path / "m")
    manifest = write_manifest(folder)
    assert sorted(manifest["files"]) == [
        "1_Pooling/config.json",
        "config.json",
        "model.safetensors",
        CARD_FILE,
    ]
    assert manifest["files"]["model.safetensors"] == {
        "size": 7,
        "sha256": "9a129038d9a00aed0cf6a7ea059ca50a813449061ab87848cf1a13eafdf33b2c",
    }  # sha256(b"weights")
    assert json.loads((folder / MANIFEST_FILE).read_text()) == manifest
    assert verify_folder(folder).startswith("verified (4 files")
    (folder / README_FILE).write_text("# edited by hand\n")  # documentation only
    assert verify_folder(folder).startswith("verified")


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (
            lambda f: (f / "model.safetensors").write_bytes(b"weightz"),
            "model.safetensors has sha256",
        ),
        (
            lambda f: (f / "model.safetensors").write_bytes(b"more weights"),
            "model.safetensors has 12",
        ),
        (lambda f: (f / "1_Pooling" / "config.json").unlink(), "1_Pooling/config.json is missing"),
        (lambda f: (f / "pytorch_model.bin").write_bytes(b"other"), "pytorch_model.bin is not in"),
    ],
)
def test_a_changed_missing_or_unlisted_file_refuses_the_folder(tmp_path, change, named):
    folder = _folder(tmp_path / "m")
    write_manifest(folder)
    verify_folder(folder)
    change(folder)
    os.utime(folder / "config.json")  # whatever the clock, the check reads the files again
    with pytest.raises(ScieraError, match=re.escape(f"model folder {folder}: {named}")) as err:
        verify_folder(folder)
    assert "\n" not in str(err.value) and "it was not used" in str(err.value)


def test_without_a_manifest_a_folder_loads_unchecked_unless_one_is_required(tmp_path):
    folder = _folder(tmp_path / "m")
    assert verify_folder(folder) == f"no {MANIFEST_FILE} (not hash-checked)"
    with pytest.raises(ScieraError, match=f"no {MANIFEST_FILE}"):
        verify_folder(folder, required=True)
    (folder / MANIFEST_FILE).write_text("not json")
    with pytest.raises(ScieraError, match="not a valid manifest"):
        verify_folder(folder)


def test_the_shipped_folders_match_their_manifests():
    for kind, models in SHIPPED.items():
        for name, folder in models.items():
            status = verify_folder(folder, required=True)
            assert status.startswith("verified"), (kind, name, status)


def test_identity_leaves_out_what_scores_nothing(tmp_path):
    folder = _folder(tmp_path / "m")
    before = folder_digest(folder)
    write_manifest(folder)
    (folder / README_FILE).write_text("# other\n")
    (folder / CALIBRATION_QUESTIONS_FILE).write_bytes(b"log")
    assert folder_digest(folder) == before
    (folder / "sciera-calibrator.json").write_text("{}")
    assert folder_digest(folder) != before


def test_atomic_writes_leave_no_temporary(tmp_path):
    write_atomic(tmp_path / "a.json", '{"x": 1}\n')
    write_atomic(tmp_path / "a.json", b'{"x": 2}\n')
    assert (tmp_path / "a.json").read_bytes() == b'{"x": 2}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]
