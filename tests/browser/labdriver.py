"""The browser tests' harness is ``tools/labdriver.py`` (shared with ``bench/``); ``import labdriver`` still works."""

from tools.labdriver import *  # noqa: F403
