"""The image tool against a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pegboard_image
import pegboard_model_openai_compatible
import pegboard_permissions_paths
import pegboard_permissions_web
import pegboard_profile_coding
from pegboard import Pegboard
from pegboard.testing import check_tool, isolated_pegboard
from tests.builtin.files import image_bytes
from tests.builtin.web.server import LocalServer, Reply, Seen

PLUGINS = (pegboard_image, pegboard_model_openai_compatible, pegboard_permissions_paths, pegboard_permissions_web)


def chat(server: LocalServer, answer: str = "A red square.") -> list[dict[str, Any]]:
    bodies: list[dict[str, Any]] = []

    def reply(seen: Seen) -> Reply:
        bodies.append(json.loads(seen.body))
        data = {"choices": [{"index": 0, "message": {"role": "assistant", "content": answer}}]}
        return Reply(body=json.dumps(data).encode(), content_type="application/json")

    server.route("/v1/chat/completions", reply)
    return bodies


def board(root: Path, server: LocalServer | None, **config: Any) -> Pegboard:
    data: dict[str, Any] = {**config}
    if server is not None:
        data.setdefault("models", {})["image"] = {"base_url": server.url("/v1"), "model": "eyes-1"}
    return isolated_pegboard(*PLUGINS, cwd=root, config=data)


def _image_parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    content = body["messages"][-1]["content"]
    assert isinstance(content, list)
    return [p for p in content if p.get("type") == "image_url"]


def test_conforms() -> None:
    check_tool(pegboard_image.image, {"image": "a.png", "prompt": "What is it?", "maxBytesMb": 1})


def test_a_local_picture_reaches_the_model_as_an_image_part(tmp_path: Path, server: LocalServer) -> None:
    (tmp_path / "shot.png").write_bytes(image_bytes(40, 30))
    bodies = chat(server)
    result = board(tmp_path, server).call_sync("image", {"image": "shot.png", "prompt": "What colour?"})
    assert not result.is_error, result.text
    assert result.text == "A red square."
    (body,) = bodies
    assert body["model"] == "eyes-1"
    (part,) = _image_parts(body)
    url = part["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    assert "What colour?" in json.dumps(body["messages"][-1])
    assert result.structured is not None and result.structured["width"] == 40


def test_default_prompt_and_model_override(tmp_path: Path, server: LocalServer) -> None:
    (tmp_path / "a.png").write_bytes(image_bytes(8, 8))
    bodies = chat(server)
    board(tmp_path, server).call_sync("image", {"image": "a.png", "model": "eyes-2"})
    assert bodies[0]["model"] == "eyes-2" and "Describe the image." in json.dumps(bodies[0]["messages"][-1])


def test_a_large_picture_is_fitted_to_reads_image_limits(tmp_path: Path, server: LocalServer) -> None:
    (tmp_path / "big.png").write_bytes(image_bytes(3000, 1000))
    chat(server)
    result = board(tmp_path, server).call_sync("image", {"image": "big.png"})
    assert result.structured is not None
    assert result.structured["resized"] and result.structured["width"] == 2000


def test_an_image_url_goes_through_the_network_guard(tmp_path: Path, server: LocalServer) -> None:
    server.route("/pic.png", Reply(body=image_bytes(10, 10), content_type="image/png"))
    bodies = chat(server)
    refused = board(tmp_path, server).call_sync("image", {"image": server.url("/pic.png")})
    assert refused.is_error and "127.0.0.1" in refused.text and not bodies
    allowed = board(tmp_path, server, tools={"image": {"allowPrivateHosts": ["127.0.0.1"],
                                                       "allowHttpForPrivateHosts": True}})
    result = allowed.call_sync("image", {"image": server.url("/pic.png")})
    assert not result.is_error, result.text
    assert len(_image_parts(bodies[0])) == 1


def test_read_rules_size_limits_and_non_images_are_refused(tmp_path: Path, server: LocalServer) -> None:
    (tmp_path / "secret.png").write_bytes(image_bytes(10, 10))
    (tmp_path / "big.png").write_bytes(image_bytes(800, 800, noisy=True))
    (tmp_path / "notes.png").write_text("not a picture")
    bodies = chat(server)
    pb = board(tmp_path, server, permissions={"deny": ["Read(secret.png)"]})
    denied = pb.call_sync("image", {"image": "secret.png"})
    assert denied.is_error and denied.reason == "denied"
    small = pb.call_sync("image", {"image": "big.png", "maxBytesMb": 0.01})
    assert small.is_error and small.metadata["error_kind"] == "too_large" and "maxBytesMb" in small.text
    bad = pb.call_sync("image", {"image": "notes.png"})
    assert bad.is_error and bad.metadata["error_kind"] == "invalid_image"
    missing = pb.call_sync("image", {"image": "nope.png"})
    assert missing.is_error and missing.metadata["error_kind"] == "path_not_found"
    assert not bodies


def test_unavailable_without_a_vision_model(tmp_path: Path, server: LocalServer) -> None:
    (tmp_path / "a.png").write_bytes(image_bytes(8, 8))
    small_only = {"models": {"small": {"base_url": server.url("/v1"), "model": "tiny"}}}
    pb = board(tmp_path, None, **small_only)
    tool = pb.tool("image")
    assert tool is not None
    assert "no vision model is configured" in (tool.unavailable_reason(pb) or "")
    result = pb.call_sync("image", {"image": "a.png"})
    assert result.is_error and "no vision model" in result.text
    vision_small = {"models": {"small": {"base_url": server.url("/v1"), "model": "tiny", "vision": True}}}
    seeing = board(tmp_path, None, **vision_small)
    assert seeing.tool("image").unavailable_reason(seeing) is None  # type: ignore[union-attr]


def test_the_coding_profile_resolves_image(tmp_path: Path, server: LocalServer) -> None:
    pb = isolated_pegboard(*PLUGINS, pegboard_profile_coding, cwd=tmp_path, config={
        "tools": {"profile": "coding"}, "models": {"image": {"base_url": server.url("/v1"), "model": "eyes"}}})
    assert "image" in pb.tools().enabled
