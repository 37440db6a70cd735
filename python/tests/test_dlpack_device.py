"""DLPack in device memory, zero-copy, against the fake CUDA and HIP runtimes of the CI build (tests/fakes, on
the recorded 8x H100 and 8x MI300X machines): prepared.run and from_dlpack take a producer's kDLCUDA / kDLROCM
tensor in place with the stream the protocol defines, outputs export as device memory, the producer's deleter
runs once, and wrong devices raise the library's sentence. Each case runs in a child process
(dlpack_device_cases.py), since the library reads the fakes' paths and the recorded machine at discovery. On a
real GPU, scripts/test_dlpack_gpu.py checks the same with torch.cuda tensors."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAKES = ROOT / "build" / "ci" / "tests" / "fakes"
CASES = Path(__file__).resolve().parent / "dlpack_device_cases.py"
VENDORS = {"cuda": ("h100x8", {"TB_CUDA_LIB": "fake_cuda", "TB_NVML_LIB": "fake_nvml"}),
           "hip": ("mi300x", {"TB_HIP_LIB": "fake_hip", "TB_ROCM_SMI_LIB": "fake_rocm_smi"})}
NO_LIB = "/nonexistent/tb-test-no-lib.so"


def run_case(case: str, vendor: str) -> None:
    fixture, libs = VENDORS[vendor]
    for lib in libs.values():
        if not (FAKES / f"{lib}.so").exists():
            pytest.skip(f"{FAKES / lib}.so is not built (cmake --build build/ci)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TB_", "FAKE_"))}
    for var in ("TB_CUDA_LIB", "TB_NVML_LIB", "TB_HIP_LIB", "TB_ROCM_SMI_LIB", "TB_ZE_LIB", "TB_OPENCL_LIB",
                "TB_VULKAN_LIB", "TB_TPU_LIB"):
        env[var] = str(FAKES / f"{libs[var]}.so") if var in libs else NO_LIB
    if vendor == "cuda":  # cuda:0 runs the model's Relu itself: the fake computes it on the kernels' emulator
        emulator = FAKES / "cuda_emu.so"
        if not emulator.exists():
            pytest.skip(f"{emulator} is not built (no C++ compiler at configure), so the fake GPU computes nothing")
        env["FAKE_CUDA_EMULATE"] = str(emulator)
        # the fake NVRTC's modules are what the fake driver loads (a real NVRTC's cubin is refused with 200), and
        # a private cache: the user's cache may hold modules of another NVRTC for the same source
        env["TB_NVRTC_LIB"] = str(FAKES / "fake_nvrtc.so")
        env["TB_CACHE_DIR"] = tempfile.mkdtemp(prefix="tb_dlpack_cache_")
    env["TB_FSROOT"] = str(ROOT / "tests" / "fixtures" / fixture)
    env["TB_LOG"] = "error"
    try:
        out = subprocess.run([sys.executable, str(CASES), case, vendor], env=env, capture_output=True, text=True,
                             timeout=120)
    finally:
        if "TB_CACHE_DIR" in env:
            shutil.rmtree(env["TB_CACHE_DIR"], ignore_errors=True)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stdout + out.stderr


@pytest.mark.parametrize("vendor", ["cuda", "hip"])
def test_run_takes_device_memory_in_place(vendor: str) -> None:
    run_case("run_in_place", vendor)


@pytest.mark.parametrize("vendor", ["cuda", "hip"])
def test_from_dlpack_shares_the_device_pointer(vendor: str) -> None:
    run_case("from_dlpack_shares", vendor)


@pytest.mark.parametrize("vendor", ["cuda", "hip"])
def test_wrong_devices_raise_the_library_sentence(vendor: str) -> None:
    run_case("wrong_devices", vendor)


def test_managed_memory() -> None:
    run_case("managed", "cuda")
