"""Shared fixtures of the Python package's tests: small models written by onnx_build, the bundled models."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import onnx_build  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def relu_path(tmp_path: Path) -> Path:
    p = tmp_path / "relu.onnx"
    p.write_bytes(onnx_build.relu((3, 4)))
    return p


@pytest.fixture
def cnn_path() -> Path:
    return ROOT / "models" / "cnn_small.onnx"


@pytest.fixture
def tb_cli() -> Path:
    """The `tb` tool of the CI build, for comparing with the CLI's JSON."""
    p = ROOT / "build" / "ci" / "tb"
    if not p.exists():
        pytest.skip(f"{p} is not built (cmake --build build/ci)")
    return p
