"""Exceptions: one class per status, carrying the status and the library's sentence."""
import pytest

import tensorbridge as tb
from tensorbridge import _tb
from tensorbridge._errors import _BY_STATUS


def test_one_class_per_status_in_code_order():
    assert len(_BY_STATUS) == 11
    for code, cls in enumerate(_BY_STATUS):
        if code == 0:
            assert cls is tb.TensorBridgeError
            continue
        assert issubclass(cls, tb.TensorBridgeError)
        assert cls.status == code
        e = cls(code, "the sentence")
        assert e.status_name == _tb.status_name(code)
        assert str(e) == f"the sentence [{_tb.status_name(code)}]"
        assert e.message == "the sentence"
    assert len(set(_BY_STATUS)) == 11


def test_builtin_bases_for_idiomatic_except():
    assert issubclass(tb.InvalidArgumentError, ValueError)
    assert issubclass(tb.NotFoundError, LookupError)
    assert issubclass(tb.InputOutputError, OSError)


def test_library_error_carries_status_and_sentence():
    with pytest.raises(tb.NotFoundError) as info:
        tb.select("nosuch")
    assert info.value.status == 2
    assert info.value.status_name == "TB_ERR_NOT_FOUND"
    assert info.value.message.startswith("'nosuch' is not a backend; valid names are auto, cpu")
