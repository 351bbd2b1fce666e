"""The class hub's authenticator, on one machine (deploy/jupyterhub_config.py) and on Kubernetes
(deploy/z2jh-values.yaml mounts this file into the hub pod and names the class).

Self-contained on purpose: it needs only what the chart's hub image has (JupyterHub, NativeAuthenticator).
Its pages are in deploy/templates/ (signup.html, authorization-area.html, 429.html).

What it changes in NativeAuthenticator, and why (deploy/README.md):

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
- **The client's address comes from the hop the hub's own proxy adds** to ``X-Forwarded-For``
  (``trusted_proxies`` hops from the end: 1 for configurable-http-proxy alone, 2 with the guide's nginx or
  z2jh's traefik in front), never from a header the client sets (``X-Real-Ip``, the first hops): a visitor
  cannot pick the address they are counted under (the review's N11).
- **bcrypt off the event loop**, and **checks capped** per address (``queued_checks_per_address``) and in
  total (``queued_checks``, also the number of threads, so no check waits behind another): past either, a
  login gets 429 at once instead of waiting, so a burst of wrong passwords from one address cannot stall
  someone else's correct login (N12).
- **Sign-ups rate-limited per address** (``signups_per_address`` per ``signup_window``), an
  optional **roster** of the names the teacher expects (``roster``), and a **discard of every waiting
  sign-up** in one POST (``/hub/discard-waiting``): one classmate with the code cannot fill the page faster
  than the teacher empties it.
"""

from __future__ import annotations

import asyncio
import hmac
import os
import secrets
import time
from collections import Counter, deque
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
from traitlets import Integer, Set, Unicode, default

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

    trusted_proxies = Integer(
        1,
        config=True,
        help="proxies in front of the hub that append the client's address to X-Forwarded-For: 1 = the hub's "
        "own configurable-http-proxy; 2 = another reverse proxy (nginx, traefik) in front of it",
    )
    queued_checks_per_address = Integer(2, config=True, help="password checks queued at once per address")
    queued_checks = Integer(4, config=True, help="password checks queued at once in all")
    signups_per_address = Integer(30, config=True, help="sign-ups from one address per signup_window; 0: any")
    signup_window = Integer(600, config=True, help="seconds over which signups_per_address counts")
    roster = Set(Unicode(), config=True, help="the only names that may sign up (the admin's too); empty: any")

    @default("class_code")
    def _class_code_from_the_environment(self) -> str:
        """``HUB_CLASS_CODE`` (deploy/classhub.py passes it on; on Kubernetes: ``hub.extraEnv``), else random."""
        return os.environ.get("HUB_CLASS_CODE") or "".join(secrets.choice(_CODE_LETTERS) for _ in range(8))

    def __init__(self, add_new_table=True, *args, **kwargs):
        super().__init__(add_new_table, *args, **kwargs)
        if add_new_table:  # as NativeAuthenticator's own table: not without a database
            SignUpTime.__table__.create(self.db.bind, checkfirst=True)
        self.failures: dict[tuple[str, str], _Failures] = {}  # (address, name); name "" for the address
        # as many threads as checks may wait: a check never queues behind another, a burst is refused instead
        self._bcrypt = ThreadPoolExecutor(self.queued_checks, thread_name_prefix="bcrypt")
        self._queued: Counter[str] = Counter()  # password checks waiting or running, per address
        self._signups: dict[str, deque[float]] = {}  # when each recent sign-up came, per address
        self._no_user_hash = bcrypt.hashpw(secrets.token_bytes(16), bcrypt.gensalt())  # same cost as real ones
        self.log.info("class code for sign-ups: %s (on the approval page too)", self.class_code)

    async def _off_loop(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self._bcrypt, fn, *args)

    async def _checked(self, address: str, fn, *args):
        """``fn(*args)`` (a bcrypt call) off the loop, or HTTP 429 at once when too many wait already."""
        if self._queued[address] >= self.queued_checks_per_address or sum(self._queued.values()) >= self.queued_checks:
            raise web.HTTPError(429, "Too many logins at once: try again in a few seconds")
        self._queued[address] += 1
        try:
            return await self._off_loop(fn, *args)
        finally:
            self._queued[address] -= 1
            if not self._queued[address]:
                del self._queued[address]

    def client_address(self, handler) -> str:
        """The client's address as the proxies the hub trusts saw it: the ``trusted_proxies``-th hop from the
        end of ``X-Forwarded-For`` (each proxy appends the address it was connected from; everything before
        is the client's to write). Tornado's ``remote_ip`` prefers ``X-Real-Ip``, which a client sets."""
        if handler is None:
            return ""
        hops = [h.strip() for value in handler.request.headers.get_list("X-Forwarded-For") for h in value.split(",")]
        hops = [h for h in hops if h]
        if self.trusted_proxies and len(hops) >= self.trusted_proxies:
            return hops[-self.trusted_proxies]
        context = handler.request.connection.context if handler.request.connection else None
        return getattr(context, "_orig_remote_ip", None) or handler.request.remote_ip or ""

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
                raise web.HTTPError(
                    429,
                    "Too many failed attempts %sfrom your address: try again in %d s, "
                    "or ask your teacher to unblock you",
                    who,
                    left,
                )

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
                self.log.warning(
                    "blocked %s for %d s after %d failures", key, self.seconds_before_next_try, entry.count
                )

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
        address = self.client_address(handler)
        self.refuse_if_blocked(address, name)
        info = self.get_user(name)  # the database, on the event loop; the hash check off it
        ok = await self._checked(
            address, bcrypt.checkpw, password.encode(), info.password if info else self._no_user_hash
        )
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
            self.log.warning(
                "sign-up as admin refused: the password needs %d characters", self.admin_minimum_password_length
            )
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
        info = UserInfo(
            username=username, password=hashed, is_authorized=self.open_signup or username in self.get_authed_users()
        )
        self.db.add(info)
        self.db.merge(SignUpTime(username=username, time=datetime.now(UTC).replace(tzinfo=None)))
        self.db.commit()
        return info

    def signup_allowed(self, address: str) -> bool:
        """False when ``address`` signed up ``signups_per_address`` times within the window; else counts one."""
        if not self.signups_per_address:
            return True
        now, window = time.monotonic(), self.signup_window
        recent = self._signups.setdefault(address, deque())
        while recent and now - recent[0] > window:
            recent.popleft()
        if len(recent) >= self.signups_per_address:
            return False
        recent.append(now)
        return True

    def on_roster(self, username: str) -> bool:
        return not self.roster or username in self.roster or username in self.admin_users

    def discard_waiting(self) -> list[str]:
        """Delete every sign-up that is not approved; returns their names."""
        waiting = self.db.query(UserInfo).filter(UserInfo.is_authorized.is_(False)).all()
        names = [info.username for info in waiting]
        for info in waiting:
            self.db.delete(info)
        if names:
            self.db.query(SignUpTime).filter(SignUpTime.username.in_(names)).delete(synchronize_session=False)
        self.db.commit()
        return names

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
        return [*kept, (r"/unblock", UnblockHandler), (r"/discard-waiting", DiscardWaitingHandler)]


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
        address = auth.client_address(self)
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
        elif not auth.on_roster(username):
            message = "This name is not on the class list: sign up with the name your teacher gave you."
        elif auth.user_exists(username):
            message = "This name is already taken. Please choose another one."
        elif username not in auth.admin_users and not auth.signup_allowed(address):
            message = "Too many sign-ups from your address: ask your teacher."
        elif username not in auth.admin_users and auth.pending_signups() >= auth.max_pending_signups:
            message = "Too many sign-ups are waiting for the teacher: ask them to approve or discard some first."
        elif await auth.create_user_async(username, password) is None:
            message = (
                f"Your name must be lower-case letters, digits, '-' or '_' (at most 20), and your password "
                f"at least {auth.minimum_password_length} characters and not a common one."
            )
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
        html = await self.render_template(
            "authorization-area.html",
            users=users,
            times=times,
            blocks=auth.blocks(),
            class_code=auth.class_code,
            pending=auth.pending_signups(),
            max_pending=auth.max_pending_signups,
        )
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


class DiscardWaitingHandler(native.LocalBase):
    """POST /hub/discard-waiting: delete every sign-up that waits for approval, in one go."""

    @needs_scope("admin:users")
    async def post(self):
        for name in self.authenticator.discard_waiting():
            if self.users.get(name) is not None:
                self.users.delete(name)
        self.redirect(self.hub.base_url + "authorize")
