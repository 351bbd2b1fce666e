"""The wheel carries the learner's folder: setuptools builds attnlib as pyproject.toml says, and this
step adds, under ``attnlib/data/``, what ``attnlib-lessons`` copies for a learner who installed the wheel:

- ``lessons/``: the learner edition of notebooks/ (teacher cells out, by attnlib_lessons.py's own rule);
- ``images/``: the diagrams the lessons show;
- ``etc/``: the Jupyter server and lab settings;
- ``docs/documents.md``: the page the lessons link for the source documents.

An editable install (``pip install -e .``) skips it: attnlib-lessons then reads the checkout itself.
"""

import importlib.util
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


class BuildWithLessons(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        spec = importlib.util.spec_from_file_location("attnlib_launch", HERE / "attnlib_lessons.py")
        launch = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(launch)  # standard library only: no torch in the build environment
        data = Path(self.build_lib) / "attnlib" / "data"
        shutil.rmtree(data, ignore_errors=True)
        (data / "lessons").mkdir(parents=True)
        for path in sorted((HERE / "notebooks").glob(launch.LESSONS)):
            launch.write_notebook(launch.learner_notebook(path), data / "lessons" / path.name)
        shutil.copytree(HERE / "images", data / "images")
        shutil.copytree(HERE / "etc", data / "etc", ignore=shutil.ignore_patterns("__pycache__"))
        (data / "docs").mkdir()
        shutil.copy2(HERE / "docs" / "documents.md", data / "docs" / "documents.md")


setup(cmdclass={"build_py": BuildWithLessons})
