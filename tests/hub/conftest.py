"""What the class-hub test modules share: their hub, its teacher, approving a learner.

Each module gets a hub of its own (``scope="module"``): a module sets the hub's limits by overriding the
``hub_env`` fixture (and may skip there, before the hub starts, when this machine cannot apply them), and
how the hub is reached (its address, a test certificate: tests/hub/test_hub_tls.py) with ``hub_class``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.hubclient import REPO, Hub, Learner

PROXY = REPO / "node_modules" / ".bin" / "configurable-http-proxy"
TEACHER_PASSWORD = "a-Teacher-pass-4"


@pytest.fixture(scope="module")
def hub_env() -> dict[str, str]:
    """The environment the module's hub starts with; none: ``make hub``'s defaults."""
    return {}


@pytest.fixture(scope="module")
def hub_class() -> type[Hub]:
    """The module's kind of hub: ``make hub``'s, at http://hub.localhost:PORT."""
    return Hub


@pytest.fixture(scope="module")
def hub(hub_env: dict[str, str], hub_class: type[Hub]):
    """A hub started as ``make hub`` starts it, as root; removed, with its state, accounts and processes, at the end."""
    pytest.importorskip("jupyterhub", reason="JupyterHub is not installed (make env installs requirements.lock)")
    pytest.importorskip("nativeauthenticator", reason="NativeAuthenticator is not installed")
    if not PROXY.exists():
        if shutil.which("npm") is None:
            pytest.skip("no configurable-http-proxy in node_modules/ and no npm to install it (package.json)")
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=REPO, check=True, capture_output=True)
    if os.geteuid() != 0:
        pytest.skip("the class hub gives each learner an OS account: it runs as root (CI does)")
    running = hub_class(env=hub_env)
    try:
        yield running.start()
    finally:
        running.remove()
        assert not Path(running.state).exists()


@pytest.fixture(scope="module")
def teacher(hub: Hub) -> Learner:
    """The teacher (the hub's admin), signed up and logged in, with a token."""
    person = Learner(hub, "teacher", TEACHER_PASSWORD)
    person.sign_up()
    assert person.log_in(), "the admin is approved automatically on sign-up"
    person.request_token()
    return person


@pytest.fixture(scope="module")
def approve(hub: Hub, teacher: Learner) -> Callable[[str], Learner]:
    """``approve(name)``: ``name`` signs up, the teacher approves, they log in and get a token (no server yet)."""

    def approved(name: str) -> Learner:
        person = Learner(hub, name, f"{name}-long-pass-7")
        person.sign_up()
        assert teacher.approve(name).status_code == 200
        assert person.log_in(), f"{name} cannot log in after approval"
        person.request_token()
        return person

    return approved
