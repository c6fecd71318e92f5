"""Pegboard's web permission family: ``WebFetch(domain:HOST)`` rules.

A call is judged by every host its URL may reach (a URL whose host cannot be told apart
asks); a few documentation domains need no permission. Tools that fetch (WebFetch,
web_extract) answer to this family by declaring ``permission_family="WebFetch"``.
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


class WebFamily:
    """``WebFetch(domain:HOST)``: the hosts a URL names."""

    name = "WebFetch"
    asks = True
    fields = ("url", "prompt")
    tools: Mapping[str, FamilyTool] = {}
    file_rules: Literal["read", "write"] | None = None
    borrows: Mapping[str, tuple[str, ...]] = {}

    def parse(self, rule: Rule, fields: frozenset[str] | None, note: Callable[[str], None]) -> Sequence[Reading]:
        spec = rule.specifier or ""
        param = rule.param()
        if param and param[0] == "domain":
            return [("own", param[1])]
        if param:
            return parameter_reading(rule, fields, note, primary=PRIMARY_FIELDS)
        if spec.strip() == "*":
            return [("bare", None)]
        if rule.lst == "allow":
            note("WebFetch rules take 'domain:HOST' (ignored)")
            return []
        note("WebFetch rules take 'domain:HOST'; read as a domain")
        return [("own", spec)]

    def compile(self, rule_list: str, own: Sequence[tuple[Rule, Any]]) -> Any:
        return [(r, re.compile(urlhosts.domain_regex(spec), re.IGNORECASE)) for r, spec in own]

    def judge(self, call: FamilyCall) -> Outcome:
        out = Outcome()
        rules = call.rules
        url = call.data.get("url")
        hosts, clean = urlhosts.url_hosts(url) if isinstance(url, str) else ([], False)
        if not hosts:
            out.unapproved = f"WebFetch: cannot find a host in {url!r}"
            rule = next((r for lst in ("deny", "ask") for r, _rx in rules[lst]), None)
            if rule is not None:
                out.might_apply(rule, out.unapproved)
            return out
        for lst in ("deny", "ask"):
            for r, rx in rules[lst]:
                hit = next((h for h in hosts if rx.match(h)), None)
                if hit is not None:
                    out.note(lst, r, f"{r.text} matches host {hit}")
        if clean:
            for r, rx in rules["allow"]:
                if all(rx.match(h) for h in hosts):
                    out.allow = (r, f"{r.text} allows host {hosts[0]}")
                    break
            if hosts[0] in urlhosts.PREAPPROVED_DOMAINS:
                out.default_ok = f"{hosts[0]} is a preapproved documentation domain"
        out.unapproved = (f"WebFetch of host {hosts[0]} needs permission" if clean
                          else f"WebFetch: the host of {url!r} is ambiguous ({', '.join(hosts)})")
        return out

    def suggest(self, family: str, data: Mapping[str, Any], cwd: Path, allows: Allows) -> RuleSuggestion | None:
        """``WebFetch(domain:HOST)`` for the URL's host."""
        from urllib.parse import urlsplit

        url = data.get("url")
        host = urlsplit(url).hostname if isinstance(url, str) else None
        return first_allowing([f"{family}(domain:{host})"] if host else [], data, allows)


__all__ = ["WebFamily"]
