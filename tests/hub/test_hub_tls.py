"""The class served over TLS on a real host name (deploy/README.md, "Serve the class over TLS on a real
name"), with a certificate made here for ``hub.school.example`` and ``*.hub.school.example`` by a test
authority (the ``cryptography`` package; nothing downloaded).

One hub, started as ``make hub`` starts it, with the proxy's own HTTPS (``HUB_SSL_CERT``, ``HUB_SSL_KEY``;
the guide's nginx in front is the other path, and CI has no nginx). Chromium maps the name to 127.0.0.1
(``--host-resolver-rules``) and accepts the test certificate. What the class review's N3 needs — the
hub's cookies sent to a plain-http listener on another port of the same name — does not happen: every
cookie the hub and a learner's server set is ``Secure`` (``__Host-`` where JupyterHub uses it), and a
listener of someone else on the machine, on ``http://hub.school.example:<port>`` or a learner's name,
receives none of them when the teacher's browser is sent there.

Needs root (the hub switches users) and Debian's Chromium. Every process and account is removed at the end.
"""

from __future__ import annotations

import datetime
import http.server
import os
import pwd
import re
import shutil
import socket
import stat
import subprocess
import threading
from pathlib import Path
from typing import ClassVar

import pytest

from harness.hubclient import Hub, Learner, browser_log_in, classhub
from harness.labdriver import CHROMIUM_ARGS

pytestmark = pytest.mark.hub

NAME = "hub.school.example"  # the guide's example: a name only this test resolves, to 127.0.0.1
LEARNER = "tia"


class TLSHub(Hub):
    """The hub at https://hub.school.example:PORT, each learner's server at https://<name>.hub.school.example:PORT."""

    @property
    def url(self) -> str:
        return f"https://{NAME}:{self.port}"

    def server_url(self, learner: str) -> str:
        super().server_url(learner)  # the same check of the name
        return f"https://{learner}.{NAME}:{self.port}"


def _ours(host: object) -> bool:
    return isinstance(host, str) and (host.rstrip(".") == NAME or host.rstrip(".").endswith(f".{NAME}"))


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> dict[str, Path]:
    """A test authority and, signed by it, a certificate for the name and its wildcard (PEM files)."""
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    folder = tmp_path_factory.mktemp("tls")
    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "attention class test authority")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )  # key_cert_sign, crl_sign
        .sign(ca_key, hashes.SHA256())
    )
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, NAME)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(NAME), x509.DNSName(f"*.{NAME}")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    files = {"ca": folder / "ca.pem", "cert": folder / "fullchain.pem", "key": folder / "privkey.pem"}
    files["ca"].write_bytes(ca.public_bytes(pem))
    files["cert"].write_bytes(leaf.public_bytes(pem) + ca.public_bytes(pem))
    files["key"].write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    files["key"].chmod(0o600)  # root's alone, as certbot leaves it
    return files


@pytest.fixture(scope="module")
def hub_env(certificate: dict[str, Path]) -> dict[str, str]:
    return {"HUB_SSL_CERT": str(certificate["cert"]), "HUB_SSL_KEY": str(certificate["key"])}


@pytest.fixture(scope="module")
def hub_class(certificate: dict[str, Path]):
    """TLSHub, with this process resolving the name to 127.0.0.1 and trusting the test authority (requests
    verifies the hub's certificate on every call) while the module runs."""
    real = socket.getaddrinfo

    def resolve(host, *args, **kwargs):
        return real("127.0.0.1" if _ours(host) else host, *args, **kwargs)

    before = os.environ.get("REQUESTS_CA_BUNDLE")
    socket.getaddrinfo = resolve
    os.environ["REQUESTS_CA_BUNDLE"] = str(certificate["ca"])
    try:
        yield TLSHub
    finally:
        socket.getaddrinfo = real
        if before is None:
            os.environ.pop("REQUESTS_CA_BUNDLE", None)
        else:
            os.environ["REQUESTS_CA_BUNDLE"] = before


class _Listener(http.server.BaseHTTPRequestHandler):
    """Someone else's plain-http listener on the machine: records what each request brought."""

    seen: ClassVar[list[dict[str, str]]] = []

    def do_GET(self):
        self.seen.append(
            {"host": self.headers.get("Host", ""), "path": self.path, "cookie": self.headers.get("Cookie", "")}
        )
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<html><body>log in again</body></html>")

    def log_message(self, *args):
        pass


@pytest.fixture
def listener():
    _Listener.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Listener)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], _Listener.seen
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def browser():
    """One Chromium for the module (each test opens a context of its own: its own cookies)."""
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("no chromium executable on this machine (make chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    rules = f"--host-resolver-rules=MAP {NAME} 127.0.0.1, MAP *.{NAME} 127.0.0.1"
    with sync_api.sync_playwright() as pw:
        running = pw.chromium.launch(executable_path=chromium, args=[*CHROMIUM_ARGS, rules], headless=True)
        try:
            yield running
        finally:
            running.close()


def ours(cookies: list[dict]) -> list[dict]:
    """The browser's cookies for the hub's name and its subdomains."""
    return [c for c in cookies if c["domain"].lstrip(".") == NAME or c["domain"].endswith(f".{NAME}")]


def sent_to(page, port: int, hosts: list[str], seen: list[dict[str, str]]) -> list[dict[str, str]]:
    """The browser sent to ``http://<host>:<port>/`` for each host (as a link in a notebook would send it):
    what the plain-http listener there received."""
    for host in hosts:
        page.goto(f"http://{host}:{port}/hub/login")
        assert "log in again" in page.content()  # the browser did reach the listener
    assert {s["host"] for s in seen} == {f"{host}:{port}" for host in hosts}, seen  # (its favicon too)
    return seen


def test_the_proxy_serves_the_test_certificate_and_learners_cannot_read_its_key(hub: Hub) -> None:
    import ssl

    context = ssl.create_default_context(cafile=os.environ["REQUESTS_CA_BUNDLE"])
    for host in (NAME, f"{LEARNER}.{NAME}"):
        with socket.create_connection(("127.0.0.1", hub.port), timeout=10) as raw:
            with context.wrap_socket(raw, server_hostname=host) as tls:  # verifies the chain and the name
                names = [v for k, v in tls.getpeercert()["subjectAltName"] if k == "DNS"]
        assert names == [NAME, f"*.{NAME}"], names
    service = pwd.getpwnam(f"{hub.prefix}_svc")
    copies = hub.state / "tls"
    assert (copies.stat().st_uid, stat.S_IMODE(copies.stat().st_mode)) == (service.pw_uid, 0o700)
    key = (copies / "key.pem").stat()
    assert (key.st_uid, stat.S_IMODE(key.st_mode)) == (service.pw_uid, 0o400)
    assert "https://" in hub.log() and f"{NAME}:{hub.port}/hub/signup" in hub.log()


BIND = """
import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
    print("bound")
except PermissionError:
    print("refused")
"""


def test_the_proxys_account_may_listen_on_port_443_and_gains_nothing_else(hub: Hub) -> None:
    """``HUB_PORT=443``: the proxy runs as the service account with the one capability to bind a port below
    1024 (the command prefix ``make hub`` gives it), and without it could not."""
    port = next(p for p in range(1023, 900, -1) if not _taken(p))
    runs = {}
    for low_ports in (True, False):
        prefix = classhub.as_service_account(die_with_parent=True, low_ports=low_ports, prefix=hub.prefix)
        done = subprocess.run(
            [*prefix, "/usr/bin/python3", "-c", BIND + CAPS, str(port)], capture_output=True, text=True, timeout=60
        )
        runs[low_ports] = done.stdout.split()
    assert runs[True][0] == "bound" and runs[False][0] == "refused", runs
    service = pwd.getpwnam(f"{hub.prefix}_svc").pw_uid
    for low_ports, (_, uids, effective) in runs.items():
        assert set(uids.split(",")) == {str(service)}, runs  # never root
        assert int(effective, 16) == (1 << 10 if low_ports else 0), runs  # CAP_NET_BIND_SERVICE (10) alone


CAPS = """
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
print(",".join(set(status["Uid"].split())), status["CapEff"].strip())
"""


def _taken(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def test_login_cookies_are_secure_and_never_reach_a_plain_http_port(
    hub: Hub, teacher: Learner, approve, browser, listener
) -> None:
    """N3 over TLS: the teacher logs in and is then sent to a plain-http listener on another port of the
    hub's name and of a learner's name: it receives no cookie."""
    port, seen = listener
    context = browser.new_context(ignore_https_errors=True)
    page = context.new_page()
    browser_log_in(page, hub, teacher)
    cookies = ours(context.cookies())
    names = {c["name"] for c in cookies}
    assert "__Host-jupyterhub-hub-login" in names and "jupyterhub-hub-login" not in names, names
    assert all(c["secure"] for c in cookies), [(c["name"], c["secure"]) for c in cookies]
    login = next(c for c in cookies if c["name"] == "__Host-jupyterhub-hub-login")
    assert (login["domain"], login["path"]) == (NAME, "/"), login  # host-only: __Host- holds
    got = sent_to(page, port, [NAME, f"{LEARNER}.{NAME}"], seen)
    assert all(s["cookie"] == "" for s in got), got
    # the same browser still holds its login for the hub itself (the cookies exist; they were withheld)
    page.goto(f"{hub.url}/hub/home")
    assert "/hub/logout" in page.content()
    context.close()


def test_a_learner_works_over_tls_on_their_own_name_and_keeps_their_cookies(
    hub: Hub, approve, browser, listener
) -> None:
    """The learner's server is reached over TLS at its own name, and its cookies (the server's
    ``__Host-jupyterhub-user-<name>`` among them) are Secure and reach no plain-http port either."""
    port, seen = listener
    person = approve(LEARNER)
    person.start_server()
    assert person.contents("lessons").status_code == 200  # through the proxy's TLS, on the learner's name
    context = browser.new_context(ignore_https_errors=True)
    page = context.new_page()
    browser_log_in(page, hub, person)
    # the hub's link to the learner's server: OAuth on the hub's name, then JupyterLab on the learner's
    page.goto(f"{hub.url}/user/{LEARNER}/lab", wait_until="domcontentloaded")
    page.wait_for_url(re.compile(rf"https://{LEARNER}\.{re.escape(NAME)}:\d+/user/{LEARNER}/lab"), timeout=60_000)
    assert "JupyterLab" in page.title(), page.title()
    cookies = ours(context.cookies())
    server_cookie = f"__Host-jupyterhub-user-{LEARNER}"
    mine = [c for c in cookies if c["name"] == server_cookie]
    assert mine and mine[0]["domain"] == f"{LEARNER}.{NAME}", [(c["name"], c["domain"]) for c in cookies]
    assert all(c["secure"] for c in cookies), [(c["name"], c["secure"]) for c in cookies]
    got = sent_to(page, port, [f"{LEARNER}.{NAME}", NAME], seen)
    assert all(s["cookie"] == "" for s in got), got
    context.close()
