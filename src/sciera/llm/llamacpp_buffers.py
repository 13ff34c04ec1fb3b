"""llama.cpp's extra weight buffers (CPU_REPACK, AMX): when to use them, and how.

llama.cpp repacks quantized weights into "extra buffer types" at load time: CPU_REPACK
(interleaved blocks for AVX2/AVX-512 kernels) and, on CPUs with AMX, the AMX buffer,
which llama.cpp prefers when both exist. On a 2-core virtual machine of ours whose CPU
reports AMX_INT8 (a Firecracker guest; the kernel grants tile permission), the first
``decode`` with AMX-repacked Q4_K/Q6_K weights crashed the process with a segmentation
fault, for the 1.5B and the 0.5B alike, so nothing can catch it. The same model with
extra buffers off ran at ~154 prompt tok/s there. ``auto`` therefore turns them off
when llama.cpp reports AMX, and keeps them elsewhere (on an AVX2-only machine repacking
is on by default).

llama-cpp-python's ``Llama`` has no argument for ``use_extra_bufts``; it fills its model
parameters from ``llama_model_default_params()``, so :func:`model_params_override`
substitutes that function for the duration of one construction.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any, Literal

ExtraBuffers = Literal["auto", "on", "off"]

_PATCH_LOCK = threading.Lock()


def has_amx(system_info: str) -> bool:
    """Whether llama.cpp's system info line reports AMX_INT8 support (built and present)."""
    for field in system_info.split("|"):
        name, _, value = field.partition("=")
        if name.strip().rsplit(" ", 1)[-1] == "AMX_INT8" and value.strip() == "1":
            return True
    return False


def use_extra_buffers(mode: ExtraBuffers, system_info: str) -> bool:
    """Resolve ``mode``: ``auto`` is off exactly when llama.cpp reports AMX."""
    if mode == "on":
        return True
    if mode == "off":
        return False
    if mode != "auto":
        raise ValueError(f"extra_buffers must be auto, on or off, not {mode!r}")
    return not has_amx(system_info)


def system_info(llama_cpp: Any) -> str:
    """llama.cpp's ``llama_print_system_info()`` as text."""
    info = llama_cpp.llama_print_system_info()
    return info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info)


@contextlib.contextmanager
def model_params_override(llama_cpp: Any, *, use_extra_bufts: bool) -> Iterator[None]:
    """Within the block, ``Llama(...)`` loads with ``use_extra_bufts`` set as given."""
    low = llama_cpp.llama_cpp  # the ctypes module that Llama reads its defaults from
    with _PATCH_LOCK:
        original = low.llama_model_default_params

        def defaults() -> Any:
            params = original()
            params.use_extra_bufts = use_extra_bufts
            return params

        low.llama_model_default_params = defaults
        try:
            yield
        finally:
            low.llama_model_default_params = original
