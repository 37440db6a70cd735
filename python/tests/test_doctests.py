"""The examples in docs/python.md and in the package's docstrings run as doctests."""
import doctest
import importlib
from pathlib import Path

import numpy
import pytest

import onnx_build
import tensorbridge

ROOT = Path(__file__).resolve().parents[2]
MODULES = ["tensorbridge", "tensorbridge._devices", "tensorbridge._backend", "tensorbridge._model",
           "tensorbridge._tools", "tensorbridge._errors"]


@pytest.fixture
def globs(tmp_path):
    relu = tmp_path / "relu.onnx"
    relu.write_bytes(onnx_build.relu((3, 4)))
    return {"tensorbridge": tensorbridge, "np": numpy, "relu_model": str(relu),
            "cnn_model": str(ROOT / "models" / "cnn_small.onnx")}


FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@pytest.mark.parametrize("name", MODULES)
def test_docstrings(name, globs):
    result = doctest.testmod(importlib.import_module(name), extraglobs=globs, optionflags=FLAGS)
    assert result.failed == 0


def test_docs_python_md(globs):
    result = doctest.testfile(str(ROOT / "docs" / "python.md"), module_relative=False, globs=globs,
                              optionflags=FLAGS)
    assert result.failed == 0 and result.attempted >= 20
