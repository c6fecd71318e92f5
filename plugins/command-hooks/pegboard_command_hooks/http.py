"""Running one ``http`` handler: POST the event JSON, read a 2xx JSON answer like command output.

Only URLs matching ``allowedHttpHookUrls`` are contacted; redirects are not followed (a
redirect could leave the allowlist). Header values may use ``$NAME`` / ``${NAME}`` only for
names listed in the handler's ``allowedEnvVars``; other references become empty.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import Any

from pegboard_command_hooks.runner import MAX_OUTPUT_BYTES, RawOutcome

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def expand_headers(headers: Mapping[str, Any], allowed: list[str], env: Mapping[str, str]) -> dict[str, str]:
    """Header values with allowed environment references filled in."""

    def fill(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return env.get(name, "") if name in allowed else ""

    return {str(k): _ENV_REF.sub(fill, str(v)) for k, v in headers.items()}


async def run_http(
    url: str,
    payload: bytes,
    *,
    headers: Mapping[str, str],
    timeout: float,
) -> RawOutcome:
    """POST ``payload``; 2xx is exit 0 with the body as stdout, anything else a failure."""
    import httpx  # only when an http hook runs: it is slow to import

    started = time.perf_counter()
    sent = {"Content-Type": "application/json", **headers}
    try:
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False) as client:
            response = await client.post(url, content=payload, headers=sent)
    except httpx.TimeoutException:
        return RawOutcome(
            None, duration_ms=(time.perf_counter() - started) * 1000, failure=f"timed out after {timeout:g} s"
        )
    except httpx.HTTPError as exc:
        return RawOutcome(
            None,
            duration_ms=(time.perf_counter() - started) * 1000,
            failure=f"request failed: {type(exc).__name__}: {exc}",
        )
    body = response.content
    outcome = RawOutcome(
        0 if response.is_success else None,
        stdout=body[:MAX_OUTPUT_BYTES].decode("utf-8", errors="replace"),
        duration_ms=(time.perf_counter() - started) * 1000,
        status=response.status_code,
    )
    if len(body) > MAX_OUTPUT_BYTES:
        outcome.truncated.append(f"body cut at {MAX_OUTPUT_BYTES} bytes")
    if not response.is_success:
        outcome.failure = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
    elif body.strip() and not body.lstrip().startswith(b"{"):
        outcome.failure = "2xx answer whose body is not a JSON object"
    return outcome
