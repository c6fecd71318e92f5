"""WebFetch to a development server on this machine, from the command line: the first refusal
names every setting it takes, so the user never meets the https upgrade's TLS error unexplained."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .server import LocalServer, Reply

ALLOW = "tools.web.fetch.allowPrivateHosts"
KEEP_HTTP = "tools.web.fetch.allowHttpForPrivateHosts = true"


def fetch(url: str, cwd: Path, config: str | None = None) -> subprocess.CompletedProcess[str]:
    extra = ["--config", config] if config else []
    return subprocess.run(
        [sys.executable, "-m", "pegboard", "call", "WebFetch", "--yes", *extra, "--input", f'{{"url": "{url}"}}'],
        capture_output=True, text=True, cwd=cwd, timeout=60,
    )  # fmt: skip


def test_a_local_http_server_takes_two_settings_and_one_message_names_both(
    server: LocalServer, tmp_path: Path
) -> None:
    server.route("/", Reply(body=b"<html><title>local</title><body><p>served here</p></body></html>"))
    url = server.url("/")
    first = fetch(url, tmp_path)
    assert first.returncode == 1 and ALLOW in first.stdout and KEEP_HTTP in first.stdout, first.stdout

    only_hosts = tmp_path / "hosts.toml"
    only_hosts.write_text('[tools.web.fetch]\nallowPrivateHosts = ["127.0.0.1"]\n')
    upgraded = fetch(url, tmp_path, str(only_hosts))
    assert upgraded.returncode == 1 and "WRONG_VERSION_NUMBER" in upgraded.stdout
    assert f"set {KEEP_HTTP}" in upgraded.stdout, upgraded.stdout

    both = tmp_path / "both.toml"
    both.write_text('[tools.web.fetch]\nallowPrivateHosts = ["127.0.0.1"]\nallowHttpForPrivateHosts = true\n')
    served = fetch(url, tmp_path, str(both))
    assert served.returncode == 0 and "served here" in served.stdout, served.stdout + served.stderr


def test_an_https_url_on_a_private_host_names_only_the_host_setting(tmp_path: Path) -> None:
    refused = fetch("https://127.0.0.1:9/", tmp_path)
    assert refused.returncode == 1 and ALLOW in refused.stdout and "allowHttpForPrivateHosts" not in refused.stdout
