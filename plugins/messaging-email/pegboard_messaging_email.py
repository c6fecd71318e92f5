"""The ``email`` message channel: SMTP send with STARTTLS or implicit TLS.

Targets are addresses (several separated by commas); ``allowedRecipients`` (patterns with
``*``) narrows who may be written to at all, on top of the ``Message(email:...)`` rules.
Attachments are files the Read rules allow (checked by the tools before the channel sees
them). The server, account and password count only from user-scope config or the
environment (``PEGBOARD_SMTP_PASSWORD``) and are redacted everywhere. A thread is the
``Message-ID`` of the message replied to (sent as ``In-Reply-To`` and ``References``).
"""

from __future__ import annotations

import mimetypes
import re
import smtplib
import ssl
from collections.abc import Sequence
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from pegboard import NARROWS, NEUTRAL, ConfigSection, ConfigSectionRegister, ToolContext, Widens, hookimpl
from pegboard_messaging import ChannelError, ChannelReply, ChannelRequest
from pegboard_messaging.credentials import credential, ignored_note

SETTINGS_KEY = "messaging.email"
PASSWORD_ENV = "PEGBOARD_SMTP_PASSWORD"
CREDENTIAL_KEYS = ("host", "port", "username", "password", "sender")
_ADDRESS = re.compile(r"^[^@\s,<>]+@[^@\s,<>]+\.[^@\s,<>]+$|^[^@\s,<>]+@localhost$")


class EmailSettings(BaseModel):
    host: Annotated[str | None, Widens.when_set("chooses the mail server messages go through")] = Field(
        default=None, description="SMTP server host name.")
    port: Annotated[int | None, NEUTRAL] = Field(default=None, ge=1, le=65535,
                                                 description="SMTP port (default 587 for starttls, 465 for tls, 25).")
    security: Annotated[Literal["starttls", "tls", "none"], Widens.when_set(
        "sends mail, and the password, unencrypted", unless=("starttls", "tls"))] = Field(
        default="starttls", description="starttls (upgrade a plain connection), tls (implicit), none.")
    username: Annotated[str | None, Widens.when_set("sends mail under an account of the config's choosing")] = Field(
        default=None, description="SMTP login (no login when unset).")
    password: Annotated[str | None, Widens.when_set("sends mail under an account of the config's choosing")] = Field(
        default=None, description=f"SMTP password (else {PASSWORD_ENV}).")
    sender: Annotated[str | None, Widens.when_set("chooses the From address")] = Field(
        default=None, description="The From address.")
    allowedRecipients: Annotated[list[str], NARROWS] = Field(
        default_factory=list, description="Address patterns (`*`) mail may go to; empty: any (rules still apply).")
    verifyCertificates: Annotated[bool, Widens.when_false("accepts any server certificate")] = Field(
        default=True, description="Check the server's TLS certificate.")
    caFile: Annotated[str | None, Widens.when_set("trusts another certificate authority")] = Field(
        default=None, description="Extra CA bundle (PEM) for the server certificate.")
    timeoutSeconds: Annotated[float, NEUTRAL] = Field(default=20.0, gt=0, le=300, description="SMTP deadline.")


def _settings(ctx: ToolContext) -> EmailSettings:
    value: EmailSettings = ctx.settings(SETTINGS_KEY)
    return value


def account(ctx: ToolContext) -> dict[str, Any]:
    """Server and account from outside the project, the password possibly from the environment."""
    found = {k: credential(ctx, f"{SETTINGS_KEY}.{k}") for k in CREDENTIAL_KEYS}
    if not found["password"] and ctx.env.get(PASSWORD_ENV):
        found["password"] = ctx.env[PASSWORD_ENV]
    return found


def _matches(address: str, pattern: str) -> bool:
    rx = "".join(".*" if c == "*" else re.escape(c) for c in pattern.strip().lower())
    return re.fullmatch(rx, address.lower()) is not None


def recipients(target: str | None, allowed: Sequence[str]) -> list[str]:
    if not target:
        raise ChannelError("name the recipient address(es) as the target", "invalid_target")
    found = [a.strip() for a in target.split(",") if a.strip()]
    for address in found:
        if not _ADDRESS.match(address):
            raise ChannelError(f"{address!r} is not an email address", "invalid_target")
        if allowed and not any(_matches(address, p) for p in allowed):
            raise ChannelError(f"{address} is not in {SETTINGS_KEY}.allowedRecipients", "invalid_target")
    return found


class EmailChannel:
    name = "email"
    capabilities = frozenset({"send", "thread-reply", "notify"})

    def unavailable_reason(self, context: ToolContext) -> str | None:
        acct = account(context)
        if not acct["host"] or not acct["sender"]:
            missing = " and ".join(k for k in ("host", "sender") if not acct[k])
            note = ignored_note(context, *(f"{SETTINGS_KEY}.{k}" for k in CREDENTIAL_KEYS))
            return f"{SETTINGS_KEY}.{missing} is not set in your user config{note}"
        if acct["username"] and not acct["password"]:
            return f"{SETTINGS_KEY}.username is set but no password ({SETTINGS_KEY}.password or {PASSWORD_ENV})"
        return None

    def secrets(self, context: ToolContext) -> Sequence[str]:
        password = account(context)["password"]
        return [password] if password else []

    async def perform(self, request: ChannelRequest, context: ToolContext) -> ChannelReply:
        import anyio.to_thread

        settings = _settings(context)
        acct = account(context)
        target = request.target
        if request.action == "notify" and (not target or target == "user"):
            target = acct["sender"]
        to = recipients(target, settings.allowedRecipients)
        mail = EmailMessage()
        mail["From"] = acct["sender"]
        mail["To"] = ", ".join(to)
        first = (request.text or "").strip().splitlines()
        mail["Subject"] = request.title or (first[0][:78] if first else "(no subject)")
        mail["Date"] = formatdate(localtime=False)
        domain = str(acct["sender"]).rpartition("@")[2] or None
        message_id = make_msgid(domain=domain)
        mail["Message-ID"] = message_id
        if request.thread_id:
            mail["In-Reply-To"] = request.thread_id
            mail["References"] = request.thread_id
        mail.set_content(request.text or "")
        for path in request.attachments:
            kind, _ = mimetypes.guess_type(path.name)
            main, _, sub = (kind or "application/octet-stream").partition("/")
            mail.add_attachment(path.read_bytes(), maintype=main, subtype=sub, filename=path.name)
        await anyio.to_thread.run_sync(self._send, mail, acct, settings)
        return ChannelReply(message_id=message_id, thread_id=request.thread_id or message_id, status="sent",
                            data={"recipients": to})

    @staticmethod
    def _send(mail: EmailMessage, acct: dict[str, Any], settings: EmailSettings) -> None:
        context = ssl.create_default_context(cafile=settings.caFile)
        if not settings.verifyCertificates:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        port = acct["port"] or {"tls": 465, "starttls": 587}.get(settings.security, 25)
        host = str(acct["host"])
        try:
            smtp: smtplib.SMTP
            if settings.security == "tls":
                smtp = smtplib.SMTP_SSL(host, port, timeout=settings.timeoutSeconds, context=context)
            else:
                smtp = smtplib.SMTP(host, port, timeout=settings.timeoutSeconds)
            with smtp:
                if settings.security == "starttls":
                    smtp.starttls(context=context)
                if acct["username"]:
                    try:
                        smtp.login(str(acct["username"]), str(acct["password"]))
                    except smtplib.SMTPServerDisconnected:
                        raise ChannelError("the server refused the login (it closed the connection)",
                                           "rejected") from None
                smtp.send_message(mail)
        except ChannelError:
            raise
        except smtplib.SMTPNotSupportedError:
            raise ChannelError(f"the server {host}:{port} does not offer STARTTLS; set {SETTINGS_KEY}.security "
                               "to tls, or none only for a server on this machine", "rejected") from None
        except smtplib.SMTPAuthenticationError as exc:
            raise ChannelError(f"the server refused the login (SMTP {exc.smtp_code})", "rejected") from None
        except smtplib.SMTPRecipientsRefused as exc:
            raise ChannelError(f"the server refused the recipient(s) {', '.join(exc.recipients)}",
                               "rejected") from None
        except smtplib.SMTPResponseException as exc:
            raise ChannelError(f"the server answered SMTP {exc.smtp_code}", "rejected") from None
        except ssl.SSLError as exc:
            raise ChannelError(f"TLS with {host}:{port} failed: {exc.reason or exc}", "channel_down") from None
        except (OSError, smtplib.SMTPException) as exc:
            raise ChannelError(f"the mail server {host}:{port} cannot be reached: {type(exc).__name__}",
                               "channel_down") from None


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(ConfigSection(SETTINGS_KEY, EmailSettings, description="The email (SMTP) message channel."))


@hookimpl
def register_channels(register: Any) -> None:
    register(EmailChannel())


__all__ = ["SETTINGS_KEY", "EmailChannel", "EmailSettings"]
