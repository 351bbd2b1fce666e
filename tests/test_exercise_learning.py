"""Lesson 13 checkers: the solutions pass; the typical slips get their hint."""

from attnlib.lessons import check


def test_learning_exercises():
    assert check("learning.1", 5).correct
    assert "from 0" in check("learning.1", 6).message
    assert check("learning.2", lambda w: w.flip(1).diagonal()).correct
    assert "diagonal" in check("learning.2", lambda w: w.diagonal()).message
    assert check("learning.3", 8).correct
    assert "one half back" in check("learning.3", 2).message
