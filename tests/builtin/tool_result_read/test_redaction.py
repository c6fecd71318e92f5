"""Credentials never reach the model, neither in a projection nor in a stored record."""

from __future__ import annotations

from pathlib import Path

import pytest

import pegboard_tool_result_read as trr
from pegboard import SQLiteSessionStore
from pegboard.testing import isolated_pegboard
from tests.builtin.tool_result_read.support import LIMIT, EmitPlugin

ENV_SECRET = "value-of-a-secret-env-var-123456"
SECRETS = {
    "anthropic key": "sk-ant-" + "a1B2c3D4e5F6g7H8i9J0k1L2",
    "aws key": "AKIA" + "ABCDEFGHIJKLMNOP",
    "github token": "ghp_" + "a" * 36,
    "private key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
    "bearer header": "Authorization: Bearer abcdefghijklmnop1234",
    "secret env var": ENV_SECRET,
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
async def test_redacted_in_projection_and_stored_record(tmp_path: Path, kind: str) -> None:
    secret = SECRETS[kind]
    pb = isolated_pegboard(
        EmitPlugin(), trr, cwd=tmp_path, env={"SERVICE_TOKEN": ENV_SECRET},
        store=SQLiteSessionStore(tmp_path / "s.db"),
    )
    padding = ("p" * 99 + "\n") * (LIMIT // 100)
    async with pb.session() as s:
        short = await s.call("Emit", {"text": f"here: {secret} end"})
        assert secret.split("\n")[0] not in short.text and "[REDACTED]" in short.text
        cut = await s.call("Emit", {"text": f"{padding} {secret} {padding}"})
        ref = cut.metadata["details_ref"]
        stored = s.results.get(ref)
        assert stored is not None and secret not in stored.text and "[REDACTED]" in stored.text
        page = await s.call("tool_result_read", {"ref": ref, "offset": LIMIT - 10, "limit": 200})
        assert secret not in page.text and "[REDACTED]" in page.text
        direct = s.results.put("Emit", f"kept {secret}", raw=f"raw {secret}")
        kept = s.results.get(direct)
        assert kept is not None and secret not in kept.text and secret not in (kept.raw or "")
