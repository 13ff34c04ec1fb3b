"""Which precision a cross-encoder runs at, and which calibrator files its scores go
through."""

from __future__ import annotations

import logging

import pytest

from sciera.rerank import onnx_int8
from sciera.rerank.cross_encoder import _resolve_precision, calibrator_files

FP32 = {"calibrated": "c.json", "fused": "f.json"}
INT8 = {"calibrated": "c-int8.json", "fused": "f-int8.json"}


def test_fp32_uses_the_fp32_calibrators_even_when_int8_ones_exist(caplog):
    with caplog.at_level(logging.WARNING):
        assert (
            calibrator_files({"calibrators": FP32, "calibrators_int8": INT8}, "fp32", "m") == FP32
        )
    assert not caplog.records


def test_int8_uses_the_calibrators_fitted_on_int8_logits():
    assert calibrator_files({"calibrators": FP32, "calibrators_int8": INT8}, "int8", "m") == INT8


def test_int8_without_them_falls_back_to_fp32_and_says_how_to_refit(caplog):
    with caplog.at_level(logging.WARNING):
        assert calibrator_files({"calibrators": FP32}, "int8", "my-model") == FP32
    (record,) = caplog.records
    assert "sciera train recalibrate my-model --precision int8" in record.getMessage()


@pytest.mark.parametrize(
    ("card", "expected"),
    [
        ({"calibrators": FP32, "calibrators_int8": INT8}, "int8"),
        ({"calibrators": FP32}, "fp32"),  # not calibrated for int8: its logits would drift
        (None, "fp32"),  # no card (a hub model): raw logits, keep them exact
    ],
)
def test_auto_takes_int8_only_where_the_card_calibrated_it(card, expected, monkeypatch):
    pytest.importorskip("onnxruntime")
    monkeypatch.setattr(onnx_int8, "int8_is_faster", lambda: True)
    assert _resolve_precision("auto", card) == expected
    assert _resolve_precision("fp32", card) == "fp32"
    assert _resolve_precision("int8", card) == "int8"


def test_auto_takes_fp32_on_a_cpu_where_int8_is_slower(monkeypatch):
    pytest.importorskip("onnxruntime")
    monkeypatch.setattr(onnx_int8, "int8_is_faster", lambda: False)
    card = {"calibrators": FP32, "calibrators_int8": INT8}
    assert _resolve_precision("auto", card) == "fp32"
    assert _resolve_precision("int8", card) == "int8"  # asked for, it is kept


AVX2_ONLY = "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse4_2 avx avx2 fma\n"
AVX512 = "flags\t\t: fpu avx2 avx512f avx512dq avx512bw avx512vl\n"
VNNI_NO_AVX512 = "flags\t\t: fpu avx2 avx_vnni\n"


@pytest.mark.parametrize(
    ("cpuinfo", "machine", "expected"),
    [
        (AVX2_ONLY, "x86_64", False),  # measured: int8 1.7x slower than fp32
        (AVX512, "x86_64", True),  # measured: int8 1.9x faster
        (VNNI_NO_AVX512, "x86_64", True),
        ("processor\t: 0\n", "x86_64", True),  # no flags line: keep int8
        (AVX2_ONLY, "aarch64", True),  # not x86: x86 flags say nothing
    ],
)
def test_int8_is_faster_reads_the_cpu_flags(cpuinfo, machine, expected):
    assert onnx_int8.int8_is_faster(cpuinfo, machine) is expected
