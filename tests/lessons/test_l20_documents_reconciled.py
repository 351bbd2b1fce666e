"""Lesson 20's checker: document 002's vocabulary, by hand."""

from __future__ import annotations

from attnlib.lessons import check
from attnlib.text import build_vocabulary


def test_id_of_to_is_002s():
    assert check("documents_reconciled.1", 5).correct
    assert check("documents_reconciled.1", build_vocabulary("to be or not to be")["to"]).correct
    distinct = check("documents_reconciled.1", 3)
    assert not distinct.correct and "duplicates" in distinct.message
    first = check("documents_reconciled.1", 4)
    assert not first.correct and "keeps the last one" in first.message
    assert not check("documents_reconciled.1", 6).correct
