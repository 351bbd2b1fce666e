"""The class hub's authenticator, on one machine (deploy/jupyterhub_config.py) and on Kubernetes
(deploy/z2jh-values.yaml mounts this file into the hub pod and names the class).

Self-contained on purpose: it needs only what the chart's hub image has (JupyterHub, NativeAuthenticator).
Its pages are in deploy/templates/ (signup.html, authorization-area.html, 429.html).

What it changes in NativeAuthenticator, and why (docs/teaching-guide.md, "Run a class"):

- **Sign-up needs the class code** the teacher announces in the room, so nobody outside the class can
  sign up, take a learner's name first or fill the approval page; at most ``max_pending_signups`` wait.
  The approval page shows when each sign-up came.
- **Approvals need the teacher's hand**: approve, revoke, discard and unblock are POST forms carrying the
  XSRF token. A GET (an image in a notebook, a link on a foreign page) changes nothing.
- **Lock-out by client address and name, never by name alone**: ``allowed_failed_logins`` wrong passwords
  for one name from one address block that pair for ``seconds_before_next_try``; after it the count
  starts again. ``address_failures_allowed`` failures from one address, whatever the names, block the
  address. A visitor therefore blocks only themselves, never a learner elsewhere; unknown names are
  counted and answered exactly like existing ones (no name oracle). The teacher unblocks from the
  approval page.
- **bcrypt off the event loop**, one check at a time: wrong passwords cost CPU, never the hub's latency.
"""

from __future__ import annotations

import asyncio
import hmac
import os
import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime

import bcrypt
from jupyterhub.scopes import needs_scope
from nativeauthenticator import NativeAuthenticator
from nativeauthenticator import handlers as native
from nativeauthenticator.orm import UserInfo
from sqlalchemy import Column, DateTime, String
from sqlalchemy.orm import declarative_base
from tornado import web
from traitlets import Integer, Unicode, default

__all__ = ["ClassAuthenticator"]

_Base = declarative_base()
_CODE_LETTERS = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i: read aloud or off a board


class SignUpTime(_Base):
    """When each sign-up came (NativeAuthenticator keeps none): the approval page shows it."""

    __tablename__ = "class_signup_times"
    username = Column(String(128), primary_key=True)
    time = Column(DateTime, nullable=False)


@dataclass
class _Failures:
    count: int = 0
    last: float = 0.0  # time.monotonic() of the last failure
    blocked_until: float = 0.0


class ClassAuthenticator(NativeAuthenticator):
    """NativeAuthenticator for a class: a class code to sign up, approvals by POST, lock-out by address."""

    admin_minimum_password_length = Integer(16, config=True, help="characters the admin's password needs")
    class_code = Unicode(config=True, help="what every sign-up needs (the teacher's too); see the default")
    max_pending_signups = Integer(60, config=True, help="sign-ups waiting for approval at most")
    address_failures_allowed = Integer(
        20, config=True, help="failed logins or class codes from one address, any names, before it is blocked"
    )

    @default("class_code")
    def _class_code_from_the_environment(self) -> str:
        """``HUB_CLASS_CODE`` (deploy/classhub.py passes it on; on Kubernetes: ``hub.extraEnv``), else random."""
        return os.environ.get("HUB_CLASS_CODE") or "".join(secrets.choice(_CODE_LETTERS) for _ in range(8))

    def __init__(self, add_new_table=True, *args, **kwargs):
        super().__init__(add_new_table, *args, **kwargs)
        if add_new_table:  # as NativeAuthenticator's own table: not without a database
            SignUpTime.__table__.create(self.db.bind, checkfirst=True)
        self.failures: dict[tuple[str, str], _Failures] = {}  # (address, name); name "" for the address
        self._bcrypt = ThreadPoolExecutor(1, thread_name_prefix="bcrypt")  # one check at a time
        self._no_user_hash = bcrypt.hashpw(secrets.token_bytes(16), bcrypt.gensalt())  # same cost as real ones
        self.log.info("class code for sign-ups: %s (on the approval page too)", self.class_code)

    async def _off_loop(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self._bcrypt, fn, *args)

    # ------------------------------------------------------------ lock-out by (address, name) and address
    def _entry(self, key: tuple[str, str]) -> _Failures | None:
        """The live failure record of ``key``: an expired block, or failures older than one period, are gone."""
        entry, now = self.failures.get(key), time.monotonic()
        if entry is None:
            return None
        if (entry.blocked_until and entry.blocked_until <= now) or (
            not entry.blocked_until and now - entry.last > self.seconds_before_next_try
        ):
            del self.failures[key]  # the block expired, or the failures are old: the count starts again
            return None
        return entry

    def refuse_if_blocked(self, address: str, name: str = "") -> None:
        """HTTP 429 while ``address`` (for ``name``) is blocked; the same answer for any name."""
        for key in ((address, ""), (address, name)) if name else ((address, ""),):
            entry = self._entry(key)
            if entry and entry.blocked_until:
                left = max(1, round(entry.blocked_until - time.monotonic()))
                who = f"for {name} " if key[1] else ""
                raise web.HTTPError(429, "Too many failed attempts %sfrom your address: try again in %d s, "
                                    "or ask your teacher to unblock you", who, left)  # fmt: skip

    def record_failure(self, address: str, name: str = "") -> None:
        now = time.monotonic()
        if len(self.failures) > 10_000:  # many addresses and names: forget the expired ones
            for key in list(self.failures):
                self._entry(key)
        limits = [((address, ""), self.address_failures_allowed)]
        if name and name not in self.admin_users:  # nobody can block the teacher's name (the address, yes)
            limits.append(((address, name), self.allowed_failed_logins))
        for key, allowed in limits:
            entry = self._entry(key) or self.failures.setdefault(key, _Failures())
            entry.count, entry.last = entry.count + 1, now
            if allowed and entry.count >= allowed:
                entry.blocked_until = now + self.seconds_before_next_try
                self.log.warning("blocked %s for %d s after %d failures", key, self.seconds_before_next_try,
                                 entry.count)  # fmt: skip

    def blocks(self) -> list[tuple[str, str, int]]:
        """(name or "", address, seconds left) of every block in force, for the approval page."""
        live = [(key, self._entry(key)) for key in list(self.failures)]
        now = time.monotonic()
        return [(key[1], key[0], max(1, round(e.blocked_until - now))) for key, e in live if e and e.blocked_until]

    def unblock(self, name: str, address: str) -> None:
        self.failures.pop((address, name), None)

    # ------------------------------------------------------------ logging in
    async def authenticate(self, handler, data):
        name = self.normalize_username(data.get("username", ""))
        password = data.get("password", "")
        address = handler.request.remote_ip if handler is not None else ""
        self.refuse_if_blocked(address, name)
        info = self.get_user(name)  # the database, on the event loop; the hash check off it
        ok = await self._off_loop(bcrypt.checkpw, password.encode(), info.password if info else self._no_user_hash)
        if ok and info.has_2fa:
            ok = info.is_valid_token(data.get("2fa"))
        if ok and info.is_authorized:
            self.failures.pop((address, name), None)
            return name
        if ok:  # the right password, not approved yet: only someone who knows it learns this
            if handler is not None:
                handler.class_login_error = f"{name} has not been approved by the teacher yet."
            return None
        self.record_failure(address, name)
        self.refuse_if_blocked(address, name)  # this failure was the last one allowed: say so now
        return None

    # ------------------------------------------------------------ signing up
    def _admin_password_too_short(self, username: str, password: str) -> bool:
        if username in self.admin_users and len(password) < self.admin_minimum_password_length:
            self.log.warning("sign-up as admin refused: the password needs %d characters",
                             self.admin_minimum_password_length)  # fmt: skip
            return True
        return False

    def create_user(self, username, password, **kwargs):
        if self._admin_password_too_short(self.normalize_username(username), password):
            return None
        return super().create_user(username, password, **kwargs)

    def pending_signups(self) -> int:
        return self.db.query(UserInfo).filter(UserInfo.is_authorized.is_(False)).count()

    def class_code_matches(self, code: str) -> bool:
        return hmac.compare_digest(code.strip().lower().encode(), self.class_code.lower().encode())

    async def create_user_async(self, username: str, password: str) -> UserInfo | None:
        """NativeAuthenticator's ``create_user`` with bcrypt off the event loop, recording the time."""
        username = self.normalize_username(username)
        if self.user_exists(username) or not self.validate_username(username) or not self.is_password_strong(password):
            return None
        if self._admin_password_too_short(username, password):
            return None
        hashed = await self._off_loop(bcrypt.hashpw, password.encode(), bcrypt.gensalt())
        if self.user_exists(username):  # signed up by someone else meanwhile
            return None
        info = UserInfo(username=username, password=hashed,
                        is_authorized=self.open_signup or username in self.get_authed_users())  # fmt: skip
        self.db.add(info)
        self.db.merge(SignUpTime(username=username, time=datetime.now(UTC).replace(tzinfo=None)))
        self.db.commit()
        return info

    def signup_times(self) -> dict[str, datetime]:
        return {row.username: row.time for row in self.db.query(SignUpTime).all()}

    def get_handlers(self, app):
        replaced = {
            r"/login": LoginHandler,
            r"/signup": SignUpHandler,
            r"/discard/([^/]*)": DiscardHandler,
            r"/authorize": AuthorizationAreaHandler,
            r"/authorize/([^/]*)": ApproveHandler,
        }
        kept = [(path, replaced.get(path, handler)) for path, handler in super().get_handlers(app)]
        return [*kept, (r"/unblock", UnblockHandler)]


# ---------------------------------------------------------------- the pages
class LoginHandler(native.LoginHandler):
    """NativeAuthenticator's login without its second bcrypt check on the event loop after a failure."""

    async def post(self):
        data = {arg: self.get_argument(arg, strip=False) for arg in self.request.arguments}
        user = await self.login_user(data)
        if user:
            self._jupyterhub_user = user
            self.redirect(self.get_next_url(user))
            return
        error = getattr(self, "class_login_error", None) or "Invalid username or password."
        self.finish(await self._render(login_error=error, username=data.get("username")))


class SignUpHandler(native.SignUpHandler):
    """Sign-up with the class code, a cap on waiting sign-ups and bcrypt off the event loop."""

    async def get(self):
        self.finish(await self.render_template("signup.html"))

    async def post(self):
        auth: ClassAuthenticator = self.authenticator
        address = self.request.remote_ip
        auth.refuse_if_blocked(address)
        username = auth.normalize_username(self.get_body_argument("username", "", strip=False))
        password = self.get_body_argument("signup_password", "", strip=False)
        confirmation = self.get_body_argument("signup_password_confirmation", "", strip=False)
        alert, message = "alert-danger", None
        if not auth.class_code_matches(self.get_body_argument("class_code", "", strip=False)):
            auth.record_failure(address)
            auth.refuse_if_blocked(address)  # this failure was the last one allowed: say so now
            message = "That is not the class code: ask your teacher for it."
        elif password != confirmation:
            message = "Your password did not match the confirmation. Please try again."
        elif auth.user_exists(username):
            message = "This name is already taken. Please choose another one."
        elif username not in auth.admin_users and auth.pending_signups() >= auth.max_pending_signups:
            message = "Too many sign-ups are waiting for the teacher: ask them to approve or discard some first."
        elif await auth.create_user_async(username, password) is None:
            message = (f"Your name must be lower-case letters, digits, '-' or '_' (at most 20), and your password "
                       f"at least {auth.minimum_password_length} characters and not a common one.")  # fmt: skip
        elif username in auth.admin_users or auth.open_signup:
            alert, message = "alert-success", "You are signed up: log in now."
        else:
            alert, message = "alert-info", "You are signed up: the teacher approves you, then you can log in."
        self.finish(await self.render_template("signup.html", alert=alert, result_message=message))


class AuthorizationAreaHandler(native.AuthorizationAreaHandler):
    """The approval page: sign-ups with their time, blocks, the class code; every button is a POST form."""

    @needs_scope("admin:users")
    async def get(self):
        auth: ClassAuthenticator = self.authenticator
        times = auth.signup_times()
        newest = sorted(self.db.query(UserInfo).all(), key=lambda u: times.get(u.username, datetime.min), reverse=True)
        users = sorted(newest, key=lambda u: u.is_authorized)  # waiting sign-ups first
        html = await self.render_template("authorization-area.html", users=users, times=times, blocks=auth.blocks(),
                                          class_code=auth.class_code, pending=auth.pending_signups(),
                                          max_pending=auth.max_pending_signups)  # fmt: skip
        self.finish(html)


class ApproveHandler(native.LocalBase):
    """POST /hub/authorize/<name> with ``approved`` = 1 or 0 (an explicit state, not a toggle)."""

    @needs_scope("admin:users")
    async def post(self, name):
        info = UserInfo.find(self.db, name)
        if info is None:
            raise web.HTTPError(404, "no sign-up named %s", name)
        info.is_authorized = self.get_body_argument("approved", "1") == "1"
        self.db.commit()
        self.redirect(self.hub.base_url + "authorize#" + name)


class DiscardHandler(native.DiscardHandler):
    """POST /hub/discard/<name>: delete a sign-up that is not approved."""

    async def get(self, name):
        raise web.HTTPError(405)

    async def post(self, name):
        await super().get(name)  # NativeAuthenticator's discard, admin:users scope and all


class UnblockHandler(native.LocalBase):
    """POST /hub/unblock with ``name`` and ``address``: lift a lock-out before it expires."""

    @needs_scope("admin:users")
    async def post(self):
        self.authenticator.unblock(self.get_body_argument("name", ""), self.get_body_argument("address", ""))
        self.redirect(self.hub.base_url + "authorize#blocks")
