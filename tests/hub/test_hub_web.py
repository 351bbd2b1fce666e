"""The class hub's web side under attack (issue #39; the attacks are in the class review of 2026-11-28):
each test runs an attack and asserts it gains nothing.

- A20, the teacher takeover: a learner's signed notebook whose script, when the teacher opens it in the
  learner's server to help, tries the hub's API with the teacher's login. Each learner's server has its own
  origin (``<name>.hub.localhost``), so the script runs, but outside the hub's origin.
- A21/A22, approvals without the teacher's hand: an image in a notebook, a foreign page's navigation and
  form, a plain GET, a POST without the XSRF token.
- Section 4, lock-out and sign-up abuse: blocks expire and the count starts again; a visitor blocks only
  their own address; unknown and existing names get the same answers; the teacher unblocks; sign-up
  needs the class code; the approval page shows when each sign-up came; waiting sign-ups are capped.
- The class review of 2026-12-07: a client cannot choose the address it is counted under (N11); a burst
  of wrong logins cannot stall a correct one (N12); sign-ups are rate-limited per address, the teacher
  discards every waiting one at once, and a roster admits only its names.

Needs root (the hub switches users) and Debian's Chromium for the browser attacks. Every process and OS
account the test created is removed at the end, even after a failure.
"""

from __future__ import annotations

import asyncio
import html
import http.server
import importlib.util
import json
import re
import secrets
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from tornado.httputil import HTTPHeaders

from harness.hubclient import REPO, Hub, Learner, browser_log_in
from harness.labdriver import headless_chromium

pytestmark = pytest.mark.hub

PROXY = REPO / "node_modules" / ".bin" / "configurable-http-proxy"
LOCKOUT = 4  # seconds a block lasts on this hub (HUB_LOCKOUT_SECONDS)
MAX_PENDING = 6  # sign-ups waiting at most on this hub (HUB_MAX_PENDING)
SIGNUPS_PER_ADDRESS = 20  # sign-ups from one address per 10 minutes (HUB_SIGNUPS_PER_ADDRESS)
# names of their own (another test module's hub may run at the same time; accounts have a random prefix)
HELPED, WAITING, DOOMED = "wren", "mallory", "nina"


@pytest.fixture(scope="module")
def hub_env() -> dict[str, str]:
    return {
        "HUB_LOCKOUT_SECONDS": str(LOCKOUT),
        "HUB_MAX_PENDING": str(MAX_PENDING),
        "HUB_SIGNUPS_PER_ADDRESS": str(SIGNUPS_PER_ADDRESS),
    }


@pytest.fixture(scope="module")
def helped(hub: Hub, approve) -> Learner:
    """A learner with a running server, and two sign-ups waiting: one to approve, one to discard."""
    for name in (WAITING, DOOMED):
        Learner(hub, name, f"{name}-long-pass-7").sign_up()
    person = approve(HELPED)
    person.start_server()
    return person


@pytest.fixture(scope="module")
def browser():
    """One Chromium for the module's browser attacks (each opens a context of its own: its own cookies)."""
    with headless_chromium() as running:
        yield running


def approval_page(teacher: Learner) -> str:
    page = teacher.http.get(f"{teacher.hub.url}/hub/authorize", timeout=30)
    assert page.status_code == 200
    return page.text


def row(page: str, name: str) -> str | None:
    """The approval page's row of ``name`` (None when there is none)."""
    match = re.search(rf'<tr id="{re.escape(name)}".*?</tr>', page, re.S)
    return match.group(0) if match else None


def assert_approvals_unchanged(hub: Hub, teacher: Learner) -> None:
    """The waiting sign-up is still waiting (cannot log in) and the one to discard is still listed."""
    page = approval_page(teacher)
    assert row(page, WAITING) and "<td>no</td>" in row(page, WAITING), row(page, WAITING)
    assert row(page, DOOMED), f"{DOOMED}'s sign-up was discarded"
    assert not Learner(hub, WAITING, f"{WAITING}-long-pass-7", address="127.0.0.9").log_in()


def teacher_tokens(teacher: Learner) -> list[dict]:
    return teacher.api("GET", "/hub/api/users/teacher/tokens").json()["api_tokens"]


# ---------------------------------------------------------------- A20: the signed notebook the teacher opens
PROBE_JS = r"""
(async () => {
  const hub = HUB, me = LEARNER, out = {};
  const attempt = async (name, fn) => {
    try { out[name] = await fn(); } catch (e) { out[name] = "refused: " + e.name; }
  };
  const xsrfIn = (text) =>
    (text.match(/xsrf_token:\s*"([^"]+)"/) || text.match(/name="_xsrf" value="([^"]+)"/) || [])[1];
  // the control: the learner's own server, on this origin, with the teacher's access to it
  const ownXsrf = (document.cookie.match(/(?:^|; )_xsrf=([^;]*)/) || [])[1] || "";
  await attempt("own server", async () =>
    (await fetch(`/user/${me}/api/contents/help.ipynb?content=0`, {headers: {"X-XSRFToken": ownXsrf}})).status);
  // A20 as the review ran it, on this origin and on the hub's: read the teacher's XSRF token, make the
  // learner an admin, mint a teacher token
  for (const [where, base] of [["here", ""], ["hub", hub]]) {
    let token = "none";
    await attempt(`xsrf from /hub/home (${where})`, async () => {
      const r = await fetch(`${base}/hub/home`, {credentials: "include"});
      const text = await r.text();
      token = xsrfIn(text) || "none";  // the teacher's only on the teacher's page: its logout link
      return /\/hub\/logout/.test(text) ? "READ" : `not the teacher's page (${r.status} ${r.url})`;
    });
    const json = {credentials: "include", headers: {"Content-Type": "application/json", "X-XSRFToken": token}};
    await attempt(`make admin (${where})`, async () =>
      (await fetch(`${base}/hub/api/users/${me}`, {...json, method: "PATCH", body: '{"admin": true}'})).status);
    await attempt(`mint token (${where})`, async () =>
      (await fetch(`${base}/hub/api/users/teacher/tokens`,
                   {...json, method: "POST", body: `{"note": "from ${me}"}`})).status);
  }
  // requests a page can send without reading the answer (no-cors): only the server's checks stop them
  const blind = {method: "POST", mode: "no-cors", credentials: "include"};
  await attempt("blind mint token", async () =>
    (await fetch(`${hub}/hub/api/users/teacher/tokens`, {...blind, body: `{"note": "from ${me} blind"}`})).type);
  // cookie tossing: plant an _xsrf cookie for the hub's host, then use its value
  await attempt("toss _xsrf", async () => {
    document.cookie = "_xsrf=tossed; domain=hub.localhost; path=/";
    return (await fetch(`${hub}/hub/api/users/teacher/tokens?_xsrf=tossed`,
                        {...blind, body: `{"note": "from ${me} tossed"}`})).type;
  });
  const form = {"Content-Type": "application/x-www-form-urlencoded"};
  await attempt("blind approve", async () => (await fetch(`${hub}/hub/authorize/${WAITING}`,
      {...blind, headers: form, body: "approved=1&_xsrf=tossed"})).type);
  await attempt("cookies visible", async () => document.cookie.split(";").map((c) => c.split("=")[0].trim()).join(","));
  await attempt("frame the hub", () => new Promise((resolve) => {
    const frame = document.createElement("iframe");
    frame.src = `${hub}/hub/home`;
    frame.onload = () => { try { resolve("READ " + frame.contentDocument.body.innerHTML.length); }
                           catch (e) { resolve("refused: " + e.name); } };
    document.body.appendChild(frame);
    setTimeout(() => resolve("no load"), 8000);
  }));
  console.log("A20-PROBE " + JSON.stringify(out));
})();
"""


def write_signed_notebook(learner: Learner) -> None:
    """As the learner's own JupyterLab saves a notebook it trusts: a notebook whose output holds the probe and
    whose markdown holds A21's images, its code cell marked trusted, saved through the learner's server,
    which signs it with the learner's own notary secret (jupyter_server signs a notebook whose cells are all
    trusted when it saves it); read back, the server reports it trusted (its signature checks)."""
    hub = learner.hub
    script = PROBE_JS.replace("HUB", json.dumps(hub.url)).replace("LEARNER", json.dumps(learner.name))
    script = script.replace("${WAITING}", WAITING)
    markdown = f"Please help me!\n\n![]({hub.url}/hub/authorize/{WAITING})\n\n![]({hub.url}/hub/discard/{DOOMED})\n"
    probe = f'<div id="probe">help</div><script>{script}</script>'
    html_output = {"output_type": "display_data", "metadata": {}, "data": {"text/html": probe}}
    notebook = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {"cell_type": "markdown", "id": "help-text", "metadata": {}, "source": markdown},
            {
                "cell_type": "code",
                "id": "help-code",
                "metadata": {"trusted": True},
                "execution_count": 1,
                "source": "print('please help')",
                "outputs": [html_output],
            },
        ],
    }
    path = f"/user/{learner.name}/api/contents/help.ipynb"
    saved = learner.api("PUT", path, json={"type": "notebook", "content": notebook})
    assert saved.status_code in (200, 201), saved.text[:300]
    cells = learner.api("GET", path).json()["content"]["cells"]
    assert [c["metadata"].get("trusted") for c in cells if c["cell_type"] == "code"] == [True], cells


def test_each_learners_server_has_its_own_origin(hub: Hub, teacher: Learner, helped: Learner) -> None:
    server = helped.api("GET", f"/hub/api/users/{HELPED}").json()["servers"][""]
    assert server["url"] == f"{hub.server_url(HELPED)}/user/{HELPED}/"
    assert hub.server_url(HELPED) != hub.url
    names = {c.name for c in teacher.http.cookies}
    assert "__Host-jupyterhub-hub-login" in names and "jupyterhub-hub-login" not in names


def test_the_teacher_helping_in_a_learners_notebook_gives_the_learner_nothing(
    hub: Hub, teacher: Learner, helped: Learner, browser
) -> None:
    write_signed_notebook(helped)
    probes: list[str] = []
    context = browser.new_context()
    try:
        page = context.new_page()
        page.on("console", lambda msg: probes.append(msg.text) if msg.text.startswith("A20-PROBE ") else None)
        browser_log_in(page, hub, teacher)
        page.goto(f"{hub.server_url(HELPED)}/user/{HELPED}/lab/tree/help.ipynb")
        if "/oauth2/authorize" in page.url:  # JupyterHub asks the admin to confirm access to a learner's server
            page.click("form [type=submit]")
        if not probes:  # the notebook's script prints its findings once it has tried every probe
            page.wait_for_event("console", predicate=lambda msg: msg.text.startswith("A20-PROBE "), timeout=120_000)
    finally:
        context.close()
    assert probes, "the notebook's script never ran in the teacher's browser"
    seen = json.loads(probes[0].removeprefix("A20-PROBE "))
    assert seen["own server"] == 200, seen  # the script ran with the teacher's access to the learner's server
    for where in ("here", "hub"):
        assert seen[f"xsrf from /hub/home ({where})"] != "READ", seen
        for action in ("make admin", "mint token"):
            assert seen[f"{action} ({where})"] not in (200, 201), seen
    assert "jupyterhub-hub-login" not in seen["cookies visible"], seen
    assert not seen["frame the hub"].startswith("READ"), seen
    # what decides it, on the hub: no admin, no new teacher token, approvals unchanged
    assert teacher.api("GET", f"/hub/api/users/{HELPED}").json()["admin"] is False
    assert not [t for t in teacher_tokens(teacher) if HELPED in (t.get("note") or "")], teacher_tokens(teacher)
    assert_approvals_unchanged(hub, teacher)


# ---------------------------------------------------------------- A21/A22: approvals need the teacher's hand
class _ForeignPage(http.server.BaseHTTPRequestHandler):
    body = b""

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


def test_a_foreign_page_cannot_approve_or_discard(hub: Hub, teacher: Learner, helped: Learner, browser) -> None:
    approve, discard = f"{hub.url}/hub/authorize/{WAITING}", f"{hub.url}/hub/discard/{DOOMED}"
    _ForeignPage.body = f"""<html><body>
      <img src="{approve}"><img src="{discard}">
      <form id="f" method="post" action="{approve}" target="sink"><input name="approved" value="1"></form>
      <iframe name="sink"></iframe>
      <script>
        document.getElementById("f").submit();
        setTimeout(() => {{ location = {json.dumps(approve)}; }}, 1500);
        setTimeout(() => {{ location = {json.dumps(discard)}; }}, 3000);
      </script></body></html>""".encode()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ForeignPage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    context = browser.new_context()
    try:
        page = context.new_page()
        browser_log_in(page, hub, teacher)
        visited: list[str] = []
        page.on("response", lambda r: visited.append(f"{r.status} {r.url}") if "/hub/" in r.url else None)
        # the foreign page's last attack that can run: the page itself sent to the approval URL (which
        # unloads the page, so its later timer to the discard URL never fires)
        with page.expect_response(
            lambda r: r.url == approve and r.request.is_navigation_request() and r.frame == page.main_frame,
            timeout=30_000,
        ):
            page.goto(f"http://127.0.0.1:{server.server_address[1]}/")
    finally:
        context.close()
        server.shutdown()
    assert any(approve in v for v in visited), visited  # the teacher's browser did send the requests
    assert_approvals_unchanged(hub, teacher)


def test_approve_and_discard_need_a_post_with_the_xsrf_token(hub: Hub, teacher: Learner, helped: Learner) -> None:
    for path in (f"/hub/authorize/{WAITING}", f"/hub/discard/{DOOMED}", "/hub/unblock"):
        assert teacher.http.get(f"{hub.url}{path}", timeout=30).status_code == 405, path  # a GET: an image, a link
        assert teacher.http.post(f"{hub.url}{path}", data={"approved": "1"}, timeout=30).status_code == 403, path
    assert helped.approve(WAITING).status_code == 403  # a learner's own form and token: not the teacher
    assert_approvals_unchanged(hub, teacher)
    # the teacher's own form does it
    extra = Learner(hub, "oscar", "oscar-long-pass-7")
    extra.sign_up()
    assert row(approval_page(teacher), "oscar")
    assert teacher.discard("oscar").status_code == 200
    assert row(approval_page(teacher), "oscar") is None


# ---------------------------------------------------------------- section 4: lock-out and sign-up
def _guess(hub: Hub, name: str, address: str, times: int) -> list[tuple[int, str]]:
    """``times`` wrong passwords for ``name`` from ``address``: each answer's status and message."""
    answers = []
    for attempt in range(times):
        visitor = Learner(hub, name, f"wrong-password-{attempt}", address=address)
        visitor.log_in()
        text = html.unescape(re.sub(r"<[^>]+>", " ", visitor.last.text))
        message = re.search(r"(Invalid username or password|Too many failed attempts[^.]*)", text)
        answers.append((visitor.last.status_code, message.group(1).replace(name, "NAME") if message else text[:200]))
    return answers


def test_a_visitor_blocks_only_their_own_address(hub: Hub, teacher: Learner, helped: Learner) -> None:
    answers = _guess(hub, HELPED, "127.0.0.21", 4)
    assert [status for status, _ in answers] == [200, 200, 429, 429], answers
    assert "try again in" in answers[2][1] and "ask your teacher" in answers[2][1]
    again = Learner(hub, HELPED, helped.password, address="127.0.0.21")
    assert not again.log_in() and again.last.status_code == 429  # the right password, from there: blocked
    assert Learner(hub, HELPED, helped.password).log_in(), "the visitor's guesses blocked the learner elsewhere"


def test_unknown_and_existing_names_get_the_same_answers(hub: Hub, helped: Learner) -> None:
    existing = _guess(hub, HELPED, "127.0.0.22", 4)
    unknown = _guess(hub, "nobody-here", "127.0.0.23", 4)
    assert existing == unknown, (existing, unknown)
    pending = _guess(hub, WAITING, "127.0.0.24", 4)  # a sign-up waiting for approval: the same too
    assert pending == unknown, (pending, unknown)


def test_a_block_expires_and_the_count_starts_again(hub: Hub, helped: Learner) -> None:
    assert [s for s, _ in _guess(hub, HELPED, "127.0.0.25", 3)] == [200, 200, 429]
    time.sleep(LOCKOUT + 1)
    # the review's attack: one wrong password after the block expired blocked again; now two pass first
    assert [s for s, _ in _guess(hub, HELPED, "127.0.0.25", 3)] == [200, 200, 429]
    time.sleep(LOCKOUT + 1)
    assert Learner(hub, HELPED, helped.password, address="127.0.0.25").log_in()


def test_many_names_from_one_address_block_the_address(hub: Hub, helped: Learner) -> None:
    address, statuses = "127.0.0.26", []
    for i in range(12):  # 2 wrong passwords each for 12 names: 24 failures, no name blocked
        statuses += [s for s, _ in _guess(hub, f"spray{i}", address, 2)]
    assert statuses[:19] == [200] * 19 and set(statuses[19:]) == {429}, statuses  # the 20th failure blocks
    late = Learner(hub, HELPED, helped.password, address=address)
    assert not late.log_in() and late.last.status_code == 429
    coder = Learner(hub, "coder", "coder-long-pass-7", address="127.0.0.27")
    answers = [coder.sign_up("guess").status_code for _ in range(21)]
    assert answers == [200] * 19 + [429] * 2, f"wrong class codes are not counted against the address: {answers}"


def test_the_teacher_sees_and_lifts_a_block(hub: Hub, teacher: Learner, helped: Learner) -> None:
    _guess(hub, HELPED, "127.0.0.28", 3)
    blocked = Learner(hub, HELPED, helped.password, address="127.0.0.28")
    assert not blocked.log_in() and blocked.last.status_code == 429
    page = approval_page(teacher)
    assert f'data-name="{HELPED}" data-address="127.0.0.28"' in page
    assert teacher.unblock(HELPED, "127.0.0.28").status_code == 200
    assert 'data-address="127.0.0.28"' not in approval_page(teacher)
    assert blocked.log_in(), "still blocked after the teacher unblocked"


def test_sign_up_needs_the_class_code(hub: Hub, teacher: Learner) -> None:
    for code in ("", "not-the-code"):
        squatter = Learner(hub, "pat", "pat-long-pass-7", address="127.0.0.31")
        assert "not the class code" in squatter.sign_up(code).text
    assert row(approval_page(teacher), "pat") is None, "a sign-up without the class code was recorded"
    assert hub.class_code in approval_page(teacher)  # the teacher reads it there
    pat = Learner(hub, "pat", "pat-long-pass-7")
    assert "the teacher approves you" in pat.sign_up().text
    assert "approves you" in Learner(hub, "pat2", "pat-long-pass-7").sign_up(hub.class_code.upper()).text


def test_the_approval_page_shows_when_each_sign_up_came(hub: Hub, teacher: Learner) -> None:
    before = time.gmtime()
    Learner(hub, "quinn", "quinn-long-pass-7").sign_up()
    cell = re.search(r'class="signed-up">([^<]+)<', row(approval_page(teacher), "quinn")).group(1)
    signed = time.strptime(cell, "%Y-%m-%d %H:%M:%S")
    assert abs(time.mktime(signed) - time.mktime(before)) <= 60, (cell, before)


def test_waiting_sign_ups_are_capped(hub: Hub, teacher: Learner) -> None:
    answers = [Learner(hub, f"flood{i}", "flood-long-pass-7").sign_up().text for i in range(MAX_PENDING + 2)]
    waiting = approval_page(teacher).count("<td>no</td>")
    assert waiting == MAX_PENDING, waiting
    assert "Too many sign-ups are waiting" in answers[-1]
    teacher.discard("flood0")  # the teacher makes room
    assert "approves you" in Learner(hub, "late", "late-long-pass-7").sign_up().text


def test_a_learner_or_a_visitor_cannot_reach_the_approval_page(hub: Hub, helped: Learner) -> None:
    for page in (
        helped.http.get(f"{hub.url}/hub/authorize", timeout=30),
        requests.get(f"{hub.url}/hub/authorize", timeout=30),
    ):
        assert page.status_code == 403 and hub.class_code not in page.text
    assert helped.unblock(HELPED, "127.0.0.28").status_code == 403


def test_a_client_cannot_choose_the_address_it_is_counted_under(hub: Hub, teacher: Learner, helped: Learner) -> None:
    """N11: ``X-Real-Ip`` and a forged ``X-Forwarded-For`` naming the learner's address change nothing: the
    guesses count against the address the hub's proxy saw, and a fresh header per guess does not help."""
    forged = {"X-Real-Ip": "127.0.0.1", "X-Forwarded-For": "127.0.0.1"}
    statuses = []
    for i in range(4):
        visitor = Learner(hub, HELPED, f"wrong-guess-{i}", address="127.0.0.41")
        visitor.http.headers.update({**forged, "X-Real-Ip": f"10.9.8.{i}"} if i else forged)
        visitor.log_in()
        statuses.append(visitor.last.status_code)
    assert statuses == [200, 200, 429, 429], statuses
    assert Learner(hub, HELPED, helped.password).log_in(), "the forged header blocked the learner's own address"
    page = approval_page(teacher)
    assert f'data-name="{HELPED}" data-address="127.0.0.41"' in page
    assert f'data-name="{HELPED}" data-address="127.0.0.1"' not in page


def test_a_burst_of_wrong_logins_is_refused_at_once_and_a_correct_one_gets_in(hub: Hub, helped: Learner) -> None:
    """N12: 40 wrong logins at once from one address, and a correct one from elsewhere among them. At most two of
    the burst's password checks run: the rest get 429 without one, so the hub spends on the burst what those checks
    cost, not 40 checks (the review's 11.7 s stall). The correct login gets in. How long it takes is machine load
    as much as the hub: ``python -m bench.bench_hub --burst 40`` measures it (docs/performance.md); the test below
    shows a correct check never waits behind another."""

    def log_in(address: str) -> None:
        person = Learner(hub, HELPED, helped.password, address=address)
        assert person.log_in(), person.last.status_code

    before = hub.cpu_seconds()
    for _ in range(2):
        log_in("127.0.0.43")
    per_login = (hub.cpu_seconds() - before) / 2  # the hub's CPU for a login page, a form and a password check
    statuses: list[int] = []
    go = threading.Barrier(41)

    def guess(i: int) -> None:
        visitor = Learner(hub, f"burst{i}", "wrong-password-1", address="127.0.0.50")
        form = visitor.login_form()
        go.wait()
        statuses.append(visitor.post_login(form, timeout=120))

    threads = [threading.Thread(target=guess, args=(i,)) for i in range(40)]
    for thread in threads:
        thread.start()
    go.wait()  # every visitor has its login page: the burst's forms go now
    before = hub.cpu_seconds()
    log_in("127.0.0.44")  # among them: checked beside the burst's two, with a thread of its own
    for thread in threads:
        thread.join()
    spent = hub.cpu_seconds() - before
    assert statuses.count(429) >= 30, statuses
    checked = len(statuses) - statuses.count(429) + 1
    # each refused form costs the hub a small page, not a check: two logins' worth covers 40 of them and the
    # hub's own timers, and twice that covers a check's CPU time growing when other work shares the cores
    # (here 0.81 CPU-s for 3 checked, 0.275 each); 38 refused forms checked in secret would cost 10 CPU-s more
    assert spent < 2 * (checked + 2) * per_login, (
        f"the hub spent {spent:.2f} CPU-s on {checked} checked logins ({per_login:.2f} CPU-s each) and "
        f"{statuses.count(429)} refused"
    )


def test_a_password_check_never_waits_behind_another_and_a_burst_is_refused_at_once() -> None:
    """The cap behind N12, in the authenticator itself: the burst's checks hold their threads (a check that does
    not return until released), yet a check from another address starts at once; past two per address and four
    in all, a check is refused with 429 without waiting; once released, every count is back to none."""
    pytest.importorskip("nativeauthenticator")
    from tornado import web

    auth = _authenticator()
    assert (auth.queued_checks_per_address, auth.queued_checks) == (2, 4)
    release, started = threading.Event(), []

    def held(who: str) -> str:  # a password check that takes as long as the test says
        started.append(who)
        assert release.wait(30), "never released"
        return who

    async def scenario() -> tuple[list[object], list[str]]:
        burst = [asyncio.ensure_future(auth._checked("10.0.0.50", held, f"burst{i}")) for i in range(40)]
        await asyncio.sleep(0.1)  # every burst check admitted or refused
        refused = [task for task in burst if task.done()]
        statuses = {task.exception().status_code for task in refused}  # type: ignore[union-attr]
        assert (len(refused), statuses) == (38, {429}), (len(refused), statuses)
        # another address, while the burst's two still hold their threads: its check runs now, not after them
        other = await asyncio.wait_for(auth._checked("10.0.0.44", lambda: "in"), timeout=10)
        third = asyncio.ensure_future(auth._checked("10.0.0.60", held, "third"))
        fourth = asyncio.ensure_future(auth._checked("10.0.0.60", held, "fourth"))
        await asyncio.sleep(0.1)
        # four held in all: a fifth from a fresh address is refused at once
        with pytest.raises(web.HTTPError) as full:
            await asyncio.wait_for(auth._checked("10.0.0.70", lambda: "late"), timeout=1)
        assert full.value.status_code == 429
        assert sorted(started) == ["burst0", "burst1", "fourth", "third"], started
        release.set()
        done = await asyncio.gather(*[t for t in burst if t not in refused], third, fourth)
        return [other, *done], sorted(auth._queued)

    try:  # in a thread of its own: this module's Chromium (Playwright's sync API) holds this thread's event loop
        with ThreadPoolExecutor(1) as one:
            results, queued = one.submit(asyncio.run, scenario()).result()
    finally:
        release.set()  # a failed check leaves no thread held
    assert results == ["in", "burst0", "burst1", "third", "fourth"]
    assert queued == []


def test_sign_ups_from_one_address_are_rate_limited(hub: Hub, teacher: Learner) -> None:
    answers = [Learner(hub, f"rate{i}", "rate-long-pass-7", address="127.0.0.62").sign_up().text for i in range(21)]
    assert not any("Too many sign-ups from your address" in a for a in answers[:SIGNUPS_PER_ADDRESS])
    assert "Too many sign-ups from your address" in answers[SIGNUPS_PER_ADDRESS]
    elsewhere = Learner(hub, "rate-other", "rate-long-pass-7", address="127.0.0.63").sign_up().text
    assert "Too many sign-ups from your address" not in elsewhere


def test_the_teacher_discards_every_waiting_sign_up_at_once(hub: Hub, teacher: Learner, helped: Learner) -> None:
    assert "<td>no</td>" in approval_page(teacher), "nothing waits: the test needs waiting sign-ups"
    assert requests.get(f"{hub.url}/hub/discard-waiting", cookies=teacher.http.cookies, timeout=30).status_code in (
        403,
        405,
    )
    assert "<td>no</td>" in approval_page(teacher), "a GET discarded sign-ups"
    assert helped.http.post(f"{hub.url}/hub/discard-waiting", timeout=30).status_code == 403
    assert teacher._form("/hub/discard-waiting", {}, page="/hub/authorize").status_code == 200
    page = approval_page(teacher)
    assert "<td>no</td>" not in page and row(page, HELPED) is not None
    assert "approves you" in Learner(hub, "after-purge", "after-long-pass-7", address="127.0.0.64").sign_up().text


def _authenticator():
    """deploy/classauth.py's authenticator without a database (its address and sign-up rules only)."""
    module = sys.modules.get("classauth")
    if module is None:
        spec = importlib.util.spec_from_file_location("classauth", REPO / "deploy" / "classauth.py")
        module = sys.modules["classauth"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module.ClassAuthenticator(add_new_table=False)


class _Request:
    def __init__(self, headers: dict[str, str], remote_ip: str) -> None:
        self.headers, self.remote_ip, self.connection = HTTPHeaders(headers), remote_ip, None


class _Handler:
    def __init__(self, headers: dict[str, str], remote_ip: str = "127.0.0.1") -> None:
        self.request = _Request(headers, remote_ip)


def test_the_address_is_the_hop_the_trusted_proxies_added() -> None:
    pytest.importorskip("nativeauthenticator")
    auth = _authenticator()
    spoofed = _Handler({"X-Real-Ip": "6.6.6.6", "X-Forwarded-For": "6.6.6.6, 7.7.7.7, 10.0.0.5"}, "6.6.6.6")
    assert auth.client_address(spoofed) == "10.0.0.5"  # configurable-http-proxy's own hop
    auth.trusted_proxies = 2  # nginx in front: its hop, then the proxy's
    assert auth.client_address(spoofed) == "7.7.7.7"
    assert auth.client_address(_Handler({}, "192.0.2.1")) == "192.0.2.1"


def test_a_roster_admits_only_its_names_and_the_teacher() -> None:
    pytest.importorskip("nativeauthenticator")
    auth = _authenticator()
    assert auth.on_roster("anyone")  # no roster: any name
    auth.roster, auth.admin_users = {"ada", "ben"}, {"teacher"}
    assert [auth.on_roster(n) for n in ("ada", "ben", "teacher", "mallory")] == [True, True, True, False]
    auth.signups_per_address = 2
    address = f"192.0.2.{secrets.randbelow(200)}"
    assert [auth.signup_allowed(address) for _ in range(3)] == [True, True, False]
