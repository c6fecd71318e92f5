"""The official MCP conformance suite against ``pegboard serve --http``.

    python benchmarks/mcp_conformance.py [--cache DIR] [--version V] [--scenario NAME]...

Installs ``@modelcontextprotocol/conformance`` from the npm registry into a cache directory
(``--cache``, else ``$PEGBOARD_CONFORMANCE_CACHE``, else ``~/.cache/pegboard/mcp-conformance``).
The suite needs node 22 or newer; when the system node is older, a node 22 runtime (the npm
package ``node@22``) is installed into the same cache. Then it starts ``pegboard serve --http
127.0.0.1:PORT`` in an empty project, reads the capabilities the server declares, and runs
every server scenario that applies to them. Scenarios that need a capability Pegboard does not
declare (resources, completions) or the suite's own fixture tools and prompts
(``test_simple_text`` and the like, which only its reference server has) are listed as not
applicable. Exit status: 0 when every applicable scenario passed, 1 otherwise; 0 with a
``skipped`` line when neither a node 22 runtime nor the suite can be had (no npm, no network).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "@modelcontextprotocol/conformance"
DEFAULT_VERSION = "0.1.16"
NODE_MAJOR = 22
NPM_TIMEOUT = 600

# Scenario -> the server capability it exercises; None: every server (lifecycle, transport).
CAPABILITY_OF = {
    "server-initialize": None,
    "ping": None,
    "dns-rebinding-protection": None,
    "server-sse-multiple-streams": None,
    "tools-list": "tools",
    "logging-set-level": "logging",
    "completion-complete": "completions",
}
CAPABILITY_PREFIXES = {"resources-": "resources", "prompts-": "prompts"}
# Scenarios that call tools or prompts only the suite's reference server has (Pegboard's prompts
# are the project's skills, so an empty project offers none).
FIXTURE_PREFIXES = ("tools-call-", "elicitation-", "json-schema-", "server-sse-polling", "prompts-")


class Skip(Exception):
    """Neither node 22 nor the suite can be had here."""


@dataclass
class Outcome:
    scenario: str
    status: str  # passed, failed, not applicable
    detail: str = ""


def cache_dir(given: str | None) -> Path:
    if given:
        return Path(given)
    if env := os.environ.get("PEGBOARD_CONFORMANCE_CACHE"):
        return Path(env)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "pegboard" / "mcp-conformance"


def node_major(node: str) -> int:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    match = re.match(r"v(\d+)\.", out.strip())
    return int(match.group(1)) if match else 0


def npm_install(cache: Path, specs: list[str]) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise Skip("npm is not installed")
    cache.mkdir(parents=True, exist_ok=True)
    manifest = cache / "package.json"
    if not manifest.exists():  # lets the node package run its install script under npm >= 11
        manifest.write_text(json.dumps({"private": True, "allowScripts": {"node": True}}, indent=2), encoding="utf-8")
    print(f"npm install {' '.join(specs)} (into {cache})", flush=True)
    cmd = [npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund", *specs]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=NPM_TIMEOUT)
    if done.returncode != 0:
        raise Skip(f"npm install {' '.join(specs)} failed: {done.stderr.strip()[-400:]}")


def node_runtime(cache: Path) -> str:
    """A node >= 22: the system's, else the one in the cache, else installed there."""
    system = shutil.which("node")
    if system and node_major(system) >= NODE_MAJOR:
        return system
    candidates = [cache / "node_modules" / "node" / "bin" / "node", platform_node(cache)]
    for node in candidates:
        if node.exists() and node_major(str(node)) >= NODE_MAJOR:
            return str(node)
    found = f"v{node_major(system)}" if system else "missing"
    print(f"system node is {found}; installing node@{NODE_MAJOR}")
    with suppress(Skip):
        npm_install(cache, [f"node@{NODE_MAJOR}"])
    for node in candidates:
        if node.exists() and node_major(str(node)) >= NODE_MAJOR:
            return str(node)
    # The node package fetches the binary in an install script; the binary package itself needs none.
    npm_install(cache, [f"node-{platform_name()}@{NODE_MAJOR}"])
    if node_major(str(candidates[1])) >= NODE_MAJOR:
        return str(candidates[1])
    raise Skip(f"no node {NODE_MAJOR} runtime could be installed from the npm registry")


def platform_name() -> str:
    system = {"Linux": "linux", "Darwin": "darwin"}.get(platform.system(), platform.system().lower())
    arch = {"x86_64": "x64", "AMD64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine(), "x64")
    return f"{system}-{arch}"


def platform_node(cache: Path) -> Path:
    return cache / "node_modules" / f"node-{platform_name()}" / "bin" / "node"


def suite_entry(cache: Path, version: str) -> Path:
    """The suite's command-line script, installed at ``version`` if it is not yet."""
    package_dir = cache / "node_modules" / PACKAGE
    manifest = package_dir / "package.json"
    installed = json.loads(manifest.read_text(encoding="utf-8")).get("version") if manifest.exists() else None
    if installed != version:
        npm_install(cache, [f"{PACKAGE}@{version}"])
        manifest_data = json.loads(manifest.read_text(encoding="utf-8"))
    else:
        manifest_data = json.loads(manifest.read_text(encoding="utf-8"))
    bin_field = manifest_data.get("bin")
    script = bin_field if isinstance(bin_field, str) else next(iter((bin_field or {}).values()), "dist/index.js")
    return package_dir / script


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def pegboard_serve(workdir: Path) -> Iterator[str]:
    """``pegboard serve --http`` on a free port of 127.0.0.1, in an empty project; yields its URL."""
    port = free_port()
    env = {
        **os.environ,
        "PEGBOARD_CONFIG_DIR": str(workdir / "user-config"),
        "PEGBOARD_MANAGED_CONFIG_DIR": str(workdir / "managed-config"),
    }
    pegboard = shutil.which("pegboard", path=str(Path(sys.executable).parent)) or "pegboard"
    project = workdir / "project"
    (project / ".git").mkdir(parents=True)
    cmd = [pegboard, "serve", "--http", f"127.0.0.1:{port}", "--cwd", str(project)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                raise RuntimeError(f"pegboard serve exited with {proc.returncode}: {err}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def declared_capabilities(url: str) -> dict[str, object]:
    """The ``capabilities`` of the server's answer to ``initialize``."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "pegboard-conformance", "version": "1"},
        },
    }
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
    payload = next((line[5:].strip() for line in text.splitlines() if line.startswith("data:")), text)
    result = json.loads(payload).get("result", {})
    capabilities = result.get("capabilities", {})
    return capabilities if isinstance(capabilities, dict) else {}


def server_scenarios(node: str, entry: Path) -> list[str]:
    out = subprocess.run([node, str(entry), "list"], capture_output=True, text=True, timeout=60).stdout
    names: list[str] = []
    in_server = False
    for line in out.splitlines():
        if line.strip().lower().startswith("server scenarios"):
            in_server = True
        elif line.strip().lower().startswith("client scenarios"):
            in_server = False
        elif in_server and (match := re.match(r"\s*-\s*(\S+)", line)):
            names.append(match.group(1))
    return names


def applies(scenario: str, capabilities: dict[str, object]) -> str | None:
    """``None`` when ``scenario`` applies to a server declaring ``capabilities``, else why not."""
    if scenario.startswith(FIXTURE_PREFIXES):
        return "calls the suite's own fixture tools"
    needed = CAPABILITY_OF.get(scenario, "?")
    if needed == "?":
        needed = next((cap for p, cap in CAPABILITY_PREFIXES.items() if scenario.startswith(p)), "?")
    if needed == "?":
        return "not classified by this script"
    if needed is not None and needed not in capabilities:
        return f"capability {needed!r} is not declared"
    return None


def run_scenario(node: str, entry: Path, url: str, scenario: str, results: Path) -> Outcome:
    cmd = [node, str(entry), "server", "--url", url, "--scenario", scenario, "--output-dir", str(results)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        return Outcome(scenario, "failed", "timed out")
    plain = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    summary = re.search(r"Passed:\s*(\d+)/(\d+)", plain)
    detail = summary.group(0) if summary else ""
    passed = done.returncode == 0 and summary is not None and summary.group(1) == summary.group(2)
    if not passed:
        failures = [line.strip() for line in plain.splitlines() if "FAILURE" in line or "Error:" in line]
        detail = "; ".join([detail, *failures[:5]]).strip("; ")
    return Outcome(scenario, "passed" if passed else "failed", detail)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--cache", default=None, help="Where npm installs the suite and node (kept between runs).")
    parser.add_argument("--version", default=DEFAULT_VERSION, help=f"Suite version (default {DEFAULT_VERSION}).")
    parser.add_argument("--scenario", action="append", default=[], help="Only this scenario; repeatable.")
    args = parser.parse_args(argv)
    cache = cache_dir(args.cache)
    try:
        node = node_runtime(cache)
        entry = suite_entry(cache, args.version)
    except Skip as why:
        print(f"skipped: {why}")
        return 0
    print(f"node {node} (v{node_major(node)}), {PACKAGE}@{args.version}", flush=True)
    scenarios = server_scenarios(node, entry)
    if not scenarios:
        print(f"error: {PACKAGE} listed no server scenarios")
        return 1
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="pegboard-conformance-") as tmp, pegboard_serve(Path(tmp)) as url:
        capabilities = declared_capabilities(url)
        print(f"pegboard serve at {url} declares: {', '.join(sorted(capabilities)) or '(nothing)'}", flush=True)
        for scenario in scenarios:
            if args.scenario and scenario not in args.scenario:
                continue
            why_not = applies(scenario, capabilities)
            if why_not is not None:
                outcomes.append(Outcome(scenario, "not applicable", why_not))
                continue
            outcome = run_scenario(node, entry, url, scenario, Path(tmp) / "results")
            print(f"  {outcome.status:<7} {scenario} {outcome.detail}", flush=True)
            outcomes.append(outcome)
    width = max(len(o.scenario) for o in outcomes) if outcomes else 10
    print()
    for o in outcomes:
        print(f"{o.scenario:<{width}}  {o.status:<14}  {o.detail}")
    ran = [o for o in outcomes if o.status != "not applicable"]
    failed = [o for o in ran if o.status == "failed"]
    skipped = len(outcomes) - len(ran)
    print(f"\n{len(ran) - len(failed)}/{len(ran)} applicable scenarios passed; {skipped} not applicable")
    return 1 if failed or not ran else 0


if __name__ == "__main__":
    sys.exit(main())
