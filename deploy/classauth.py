"""The class hub's authenticator, on one machine (deploy/jupyterhub_config.py) and on Kubernetes
(deploy/z2jh-values.yaml mounts this file into the hub pod and names the class).

Self-contained on purpose: it needs only what the chart's hub image has (JupyterHub, NativeAuthenticator).
"""

from __future__ import annotations

from datetime import datetime

from nativeauthenticator import NativeAuthenticator
from tornado import web
from traitlets import Integer

__all__ = ["ClassAuthenticator"]


class ClassAuthenticator(NativeAuthenticator):
    """NativeAuthenticator whose lock-out tells a blocked learner so, and never locks the admin out.

    Learners: after ``allowed_failed_logins`` wrong passwords the account is blocked for
    ``seconds_before_next_try``, and the login answers 429 with the time left. The admin is never
    blocked (anyone could otherwise keep the teacher out by sending wrong passwords); instead the admin's
    password needs ``admin_minimum_password_length`` characters, which no one guesses over HTTP.
    """

    admin_minimum_password_length = Integer(16, config=True, help="characters the admin's password needs")

    def create_user(self, username, password, **kwargs):
        if self.normalize_username(username) in self.admin_users and len(password) < self.admin_minimum_password_length:
            self.log.warning("sign-up as admin refused: the password needs %d characters",
                             self.admin_minimum_password_length)  # fmt: skip
            return None
        return super().create_user(username, password, **kwargs)

    def _refuse_if_blocked(self, name: str) -> None:
        if self.allowed_failed_logins and self.is_blocked(name):
            since = (datetime.now() - self.login_attempts[name]["time"]).total_seconds()
            left = max(1, round(self.seconds_before_next_try - since))
            raise web.HTTPError(429, "%s is blocked after %d wrong passwords: try again in %d s (%s)",
                                name, self.allowed_failed_logins, left, "or ask your teacher")  # fmt: skip

    async def authenticate(self, handler, data):
        name = self.normalize_username(data.get("username", ""))
        if name in self.admin_users:
            self.login_attempts.pop(name, None)  # the admin is never blocked
            return await super().authenticate(handler, data)
        self._refuse_if_blocked(name)
        result = await super().authenticate(handler, data)
        if result is None:
            self._refuse_if_blocked(name)  # this failure was the last one allowed: say so now
        return result
