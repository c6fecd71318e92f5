"""The email channel against a real SMTP server (aiosmtpd) on 127.0.0.1: plain, STARTTLS with a
login, implicit TLS, attachments under the Read rules, threads, a server that is down."""

from __future__ import annotations

import asyncio
import email
import socket
import ssl
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import Message
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

import pegboard_messaging_email
from pegboard import Pegboard
from tests.plugins.messaging.support import Recorder, board

PASSWORD = "smtp-pass-8c1d2e3f4a5b6c7d"


@dataclass
class Inbox:
    messages: list[Message] = field(default_factory=list)
    envelopes: list[list[str]] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.envelopes.append(list(envelope.rcpt_tos))
        self.messages.append(email.message_from_bytes(envelope.content))
        return "250 OK"


def authenticator(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
    ok = isinstance(data, LoginPassword) and data.login == b"agent" and data.password == PASSWORD.encode()
    return AuthResult(success=ok)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("tls")
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return key, cert


def server_context(cert: tuple[Path, Path]) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(cert[1]), str(cert[0]))
    return context


@pytest.fixture
def plain() -> Iterator[tuple[Inbox, int]]:
    inbox, port = Inbox(), free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    yield inbox, port
    controller.stop()


@pytest.fixture
def starttls(certificate: tuple[Path, Path]) -> Iterator[tuple[Inbox, int]]:
    inbox, port = Inbox(), free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port, tls_context=server_context(certificate),
                            require_starttls=True, authenticator=authenticator, auth_required=True)
    controller.start()
    yield inbox, port
    controller.stop()


@pytest.fixture
def implicit_tls(certificate: tuple[Path, Path]) -> Iterator[tuple[Inbox, int]]:
    inbox, port = Inbox(), free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port, ssl_context=server_context(certificate))
    controller.start()
    yield inbox, port
    controller.stop()


def mail_config(port: int, **extra: Any) -> dict[str, Any]:
    settings = {"host": "127.0.0.1", "port": port, "security": "none", "sender": "agent@example.org", **extra}
    return {"messaging": {"email": settings}, "permissions": {"allow": ["Message(email)"]}}


def call(pb: Pegboard, name: str, data: dict[str, Any], rec: Recorder | None = None) -> Any:
    async def go() -> Any:
        return await pb.session(approver=(rec or Recorder()).approve).call(name, data)
    return asyncio.run(go())


def test_send_arrives_with_subject_body_and_message_id(plain: tuple[Inbox, int]) -> None:
    inbox, port = plain
    pb = board(pegboard_messaging_email, user=mail_config(port))
    result = call(pb, "send_message", {"channel": "email", "to": "bob@example.org", "subject": "Report",
                                       "text": "All green."})
    assert not result.is_error, result.text
    (mail,) = inbox.messages
    assert mail["Subject"] == "Report" and mail["From"] == "agent@example.org" and mail["To"] == "bob@example.org"
    assert mail.get_payload(decode=True).decode().strip() == "All green."  # type: ignore[union-attr]
    assert result.structured["messageId"] == mail["Message-ID"]


def test_a_thread_reply_refers_to_the_first_message(plain: tuple[Inbox, int]) -> None:
    inbox, port = plain
    pb = board(pegboard_messaging_email, user=mail_config(port))
    first = call(pb, "message", {"action": "send", "channel": "email", "target": "bob@example.org",
                                 "message": "Start"})
    reply = call(pb, "message", {"action": "thread-reply", "channel": "email", "target": "bob@example.org",
                                 "threadId": first.structured["threadId"], "message": "Follow-up"})
    assert not reply.is_error, reply.text
    assert inbox.messages[1]["In-Reply-To"] == inbox.messages[0]["Message-ID"]


def test_starttls_with_a_login(starttls: tuple[Inbox, int], certificate: tuple[Path, Path]) -> None:
    inbox, port = starttls
    config = mail_config(port, security="starttls", username="agent", caFile=str(certificate[1]))
    pb = board(pegboard_messaging_email, user=config, env={"PEGBOARD_SMTP_PASSWORD": PASSWORD})
    result = call(pb, "send_message", {"channel": "email", "to": "bob@example.org", "text": f"pw {PASSWORD}"})
    assert not result.is_error, result.text
    assert PASSWORD not in inbox.messages[0].as_string() and PASSWORD not in result.text


def test_starttls_refuses_a_certificate_it_cannot_verify(starttls: tuple[Inbox, int]) -> None:
    _, port = starttls
    config = mail_config(port, security="starttls", username="agent")
    pb = board(pegboard_messaging_email, user=config, env={"PEGBOARD_SMTP_PASSWORD": PASSWORD})
    result = call(pb, "send_message", {"channel": "email", "to": "bob@example.org", "text": "x"})
    assert result.is_error and result.metadata["error_kind"] == "channel_down" and "TLS" in result.text


def test_a_wrong_password_is_rejected(starttls: tuple[Inbox, int], certificate: tuple[Path, Path]) -> None:
    _, port = starttls
    config = mail_config(port, security="starttls", username="agent", password="wrong-password-1234",
                         caFile=str(certificate[1]))
    pb = board(pegboard_messaging_email, user=config)
    result = call(pb, "send_message", {"channel": "email", "to": "bob@example.org", "text": "x"})
    assert result.is_error and result.metadata["error_kind"] == "rejected" and "login" in result.text
    assert "wrong-password-1234" not in result.text


def test_implicit_tls(implicit_tls: tuple[Inbox, int], certificate: tuple[Path, Path]) -> None:
    inbox, port = implicit_tls
    pb = board(pegboard_messaging_email, user=mail_config(port, security="tls", caFile=str(certificate[1])))
    result = call(pb, "send_message", {"channel": "email", "to": "bob@example.org", "text": "over tls"})
    assert not result.is_error, result.text
    assert len(inbox.messages) == 1


def test_attachments_only_from_paths_the_read_rules_allow(plain: tuple[Inbox, int], tmp_path: Path) -> None:
    inbox, port = plain
    (tmp_path / "report.txt").write_text("numbers")
    (tmp_path / "secret.env").write_text("KEY=1")
    config = mail_config(port)
    config["permissions"]["deny"] = ["Read(./secret.env)"]
    pb = board(pegboard_messaging_email, user=config, cwd=tmp_path)
    ok = call(pb, "send_message", {"channel": "email", "to": "bob@example.org", "text": "see attached",
                                   "attachments": ["report.txt"]})
    denied = call(pb, "send_message", {"channel": "email", "to": "bob@example.org", "text": "x",
                                       "attachments": ["secret.env"]})
    assert not ok.is_error, ok.text
    parts = [p for p in inbox.messages[0].walk() if p.get_filename()]
    assert [(p.get_filename(), p.get_payload(decode=True)) for p in parts] == [("report.txt", b"numbers")]
    assert denied.is_error and denied.metadata["error_kind"] == "attachment_denied"
    assert len(inbox.messages) == 1


def test_allowed_recipients_narrow_and_bad_addresses_are_refused(plain: tuple[Inbox, int]) -> None:
    inbox, port = plain
    pb = board(pegboard_messaging_email, user=mail_config(port, allowedRecipients=["*@example.org"]))
    outside = call(pb, "send_message", {"channel": "email", "to": "eve@elsewhere.net", "text": "x"})
    garbage = call(pb, "send_message", {"channel": "email", "to": "not an address", "text": "x"})
    assert outside.is_error and "allowedRecipients" in outside.text
    assert garbage.is_error and garbage.metadata["error_kind"] == "invalid_target"
    assert not inbox.messages


def test_a_server_that_is_down() -> None:
    pb = board(pegboard_messaging_email, user=mail_config(free_port()))
    rec = Recorder()
    result = call(pb, "send_message", {"channel": "email", "to": "bob@example.org", "text": "x"}, rec)
    assert result.is_error and result.metadata["error_kind"] == "channel_down"
    assert "cannot be reached" in result.text


def test_the_server_and_password_in_a_project_file_are_ignored(plain: tuple[Inbox, int], tmp_path: Path) -> None:
    _, port = plain
    pb = board(pegboard_messaging_email, project=mail_config(port), cwd=tmp_path)
    result = call(pb, "messaging_status", {})
    row = result.structured["channels"][0]
    assert not row["available"] and "in a project file is ignored" in row["reason"]
