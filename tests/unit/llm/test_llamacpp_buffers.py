from types import SimpleNamespace

import pytest

from sciera.llm.llamacpp_buffers import (
    has_amx,
    model_params_override,
    system_info,
    use_extra_buffers,
)

# Verbatim from llama_print_system_info() on the two kinds of machine seen here.
AMX_INFO = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX_VNNI = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | "
    "BMI2 = 1 | AVX512 = 1 | AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | "
    "AMX_INT8 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
)
AVX2_INFO = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | "
    "LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
)


def test_amx_is_read_from_the_system_info_line():
    assert has_amx(AMX_INFO)
    assert not has_amx(AVX2_INFO)
    assert not has_amx(AMX_INFO.replace("AMX_INT8 = 1", "AMX_INT8 = 0"))
    assert not has_amx("")


def test_auto_turns_extra_buffers_off_only_with_amx():
    assert use_extra_buffers("auto", AMX_INFO) is False
    assert use_extra_buffers("auto", AVX2_INFO) is True
    assert use_extra_buffers("on", AMX_INFO) is True
    assert use_extra_buffers("off", AVX2_INFO) is False
    with pytest.raises(ValueError, match="auto, on or off"):
        use_extra_buffers("yes", AVX2_INFO)  # type: ignore[arg-type]


def _fake_llama_cpp():
    def defaults():
        return SimpleNamespace(use_extra_bufts=True, n_gpu_layers=0)

    low = SimpleNamespace(llama_model_default_params=defaults)
    return SimpleNamespace(llama_cpp=low, llama_print_system_info=lambda: AMX_INFO.encode())


def test_override_applies_inside_the_block_and_is_undone_after():
    fake = _fake_llama_cpp()
    original = fake.llama_cpp.llama_model_default_params
    with model_params_override(fake, use_extra_bufts=False):
        params = fake.llama_cpp.llama_model_default_params()
        assert params.use_extra_bufts is False
        assert params.n_gpu_layers == 0  # the other defaults are kept
    assert fake.llama_cpp.llama_model_default_params is original
    assert original().use_extra_bufts is True


def test_override_is_undone_when_loading_fails():
    fake = _fake_llama_cpp()
    original = fake.llama_cpp.llama_model_default_params
    with pytest.raises(RuntimeError), model_params_override(fake, use_extra_bufts=False):
        raise RuntimeError("load failed")
    assert fake.llama_cpp.llama_model_default_params is original


def test_system_info_decodes_bytes():
    assert has_amx(system_info(_fake_llama_cpp()))
