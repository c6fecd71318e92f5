"""``Browser(domain:HOST)`` and ``Browser(evaluate)`` rules for the browser tool.

Allow and ask rules judge top-level navigations (``open``, ``navigate`` and, inside the tool,
the navigations an ``act`` causes); deny rules judge those and, inside the tool, every
request the page makes (subresources, subframes, WebSockets). Domain patterns read as
``WebFetch(domain:...)`` patterns do (``*.example.com``), through ``pegboard-permissions-web``.
``act`` with ``kind: evaluate`` runs the model's JavaScript in the page, so it asks unless
``Browser(evaluate)`` allows it. Every other action acts on what is already open and needs
no permission of its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pegboard.permissions import (
    PRIMARY_FIELDS,
    Allows,
    FamilyCall,
    FamilyTool,
    Outcome,
    Reading,
    Rule,
    RuleSuggestion,
    first_allowing,
    parameter_reading,
)
from pegboard_permissions_web import hosts as urlhosts

NAVIGATING_ACTIONS = frozenset({"open", "navigate"})
EVALUATE = "evaluate"


def navigation_url(data: Mapping[str, Any]) -> str | None:
    """The URL a call navigates to, if its action navigates."""
    if data.get("action") not in NAVIGATING_ACTIONS:
        return None
    url = data.get("url") or data.get("targetUrl")
    return url if isinstance(url, str) else ""


def evaluates(data: Mapping[str, Any]) -> bool:
    return data.get("action") == "act" and data.get("kind") == EVALUATE


class BrowserFamily:
    """``Browser(domain:HOST)``: the sites the browser may open; ``Browser(evaluate)``: page scripts."""

    name = "Browser"
    asks = True
    fields = ("action", "url", "targetUrl", "kind", "profile", "ref", "element", "paths")
    tools: Mapping[str, FamilyTool] = {}
    file_rules: Literal["read", "write"] | None = None
    borrows: Mapping[str, tuple[str, ...]] = {}

    def parse(self, rule: Rule, fields: frozenset[str] | None, note: Callable[[str], None]) -> Sequence[Reading]:
        spec = (rule.specifier or "").strip()
        param = rule.param()
        if param and param[0] == "domain":
            return [("own", ("domain", param[1]))]
        if param:
            return parameter_reading(rule, fields, note, primary=PRIMARY_FIELDS)
        if spec == "*":
            return [("bare", None)]
        if spec.lower() == EVALUATE:
            return [("own", ("evaluate", ""))]
        if rule.lst == "allow":
            note("Browser rules take 'domain:HOST' or 'evaluate' (ignored)")
            return []
        note("Browser rules take 'domain:HOST' or 'evaluate'; read as a domain")
        return [("own", ("domain", spec))]

    def compile(self, rule_list: str, own: Sequence[tuple[Rule, Any]]) -> Any:
        out: list[tuple[Rule, str, re.Pattern[str] | None]] = []
        for rule, (kind, spec) in own:
            rx = re.compile(urlhosts.domain_regex(spec), re.IGNORECASE) if kind == "domain" else None
            out.append((rule, kind, rx))
        return out

    def judge(self, call: FamilyCall) -> Outcome:
        out = Outcome()
        if evaluates(call.data):
            for lst in ("deny", "ask", "allow"):
                for r, kind, _rx in call.rules[lst]:
                    if kind == "evaluate":
                        out.note(lst, r, f"{r.text} covers evaluate")
            out.unapproved = "browser act evaluate runs JavaScript in the page and needs permission"
            return out
        url = navigation_url(call.data)
        if url is None:
            out.default_ok = ("this browser action acts on what is open; navigations it causes are checked as "
                              "they happen")
            return out
        hosts, clean = urlhosts.url_hosts(url)
        if not hosts:
            out.unapproved = f"browser: cannot find a host in {url!r}"
            rule = next((r for lst in ("deny", "ask") for r, k, _ in call.rules[lst] if k == "domain"), None)
            if rule is not None:
                out.might_apply(rule, out.unapproved)
            return out
        for lst in ("deny", "ask"):
            for r, kind, rx in call.rules[lst]:
                hit = next((h for h in hosts if rx is not None and rx.match(h)), None)
                if kind == "domain" and hit is not None:
                    out.note(lst, r, f"{r.text} matches host {hit}")
        if clean:
            for r, kind, rx in call.rules["allow"]:
                if kind == "domain" and rx is not None and all(rx.match(h) for h in hosts):
                    out.allow = (r, f"{r.text} allows host {hosts[0]}")
                    break
        out.unapproved = (f"browser navigation to host {hosts[0]} needs permission" if clean
                          else f"browser: the host of {url!r} is ambiguous ({', '.join(hosts)})")
        return out

    def suggest(self, family: str, data: Mapping[str, Any], cwd: Path, allows: Allows) -> RuleSuggestion | None:
        """``Browser(domain:HOST)`` for a navigation, ``Browser(evaluate)`` for a script."""
        if evaluates(data):
            return first_allowing([f"{family}(evaluate)"], data, allows)
        url = navigation_url(data)
        hosts, clean = urlhosts.url_hosts(url) if url else ([], False)
        return first_allowing([f"{family}(domain:{hosts[0]})"] if hosts and clean else [], data, allows)


def domain_rule(host: str) -> str:
    """The session rule an "always" answer for ``host`` adds."""
    return f"Browser(domain:{host})"


__all__ = ["BrowserFamily", "domain_rule", "evaluates", "navigation_url"]
