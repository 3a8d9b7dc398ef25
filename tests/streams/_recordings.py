"""The recorded provider traffic beside the repository, read into exchanges (test support).

Reads the three lanes' folders of ``shared/fixtures/recorded`` (the folder ``shared`` beside the
repository): raw SSE transcripts (``.txt``/``.sse``), VCR cassettes (``.yaml``, gzip bodies
decoded) and recorded-HTTP snapshots (``.json``). The Gemini folder is read apart, by
``test_streams_gemini_recorded`` (its streamed bodies are SSE or a JSON array; no SDK accumulator).
"""

from __future__ import annotations

import gzip
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final, NoReturn

import pytest
import yaml

from otel_toolturn._vocab import Lane

SHARED: Final = Path(__file__).resolve().parents[2] / ".." / "shared"
RECORDED: Final = SHARED / "fixtures" / "recorded"
LANE_FOLDERS: Final[dict[str, Lane]] = {
    "anthropic": "anthropic.messages",
    "openai_chat": "openai.chat_completions",
    "openai_responses": "openai.responses",
}


def absent(what: str, *, module: bool = False) -> NoReturn:
    """Skip a test whose recordings are absent, with the reason; under CI (``CI`` set) fail instead.

    The recordings are the independent evidence (the simulator refuses with the library's own
    ``validate``), so a CI run that cannot read them has not checked what it claims.
    """
    reason = f"{what} beside the repository is absent"
    if os.environ.get("CI"):
        pytest.fail(f"{reason}: CI reads the recorded provider traffic and never skips it", pytrace=False)
    pytest.skip(reason, allow_module_level=module)


def present(path: Path) -> Path:
    """``path`` when the recording exists, else ``absent`` (skipped, or failed under CI)."""
    if not path.is_file():
        absent(f"the recording {path.name}")
    return path


@dataclass(frozen=True, kw_only=True)
class Exchange:
    """One recorded successful response: its lane, whether it streamed, its body and what was asked."""

    name: str
    lane: Lane
    streamed: bool
    body: bytes
    requested_model: str | None
    request: dict[str, object]


def recording_files() -> list[Path]:
    """Every recording of the three lanes, sorted (empty when the shared folder is absent)."""
    if not RECORDED.is_dir():
        return []
    return sorted(p for folder in LANE_FOLDERS for p in (RECORDED / folder).glob("*") if p.is_file())


def _headers(raw: object) -> dict[str, str]:
    if not isinstance(raw, dict):
        return {}
    out: dict[str, str] = {}
    for key, value in raw.items():
        out[str(key).lower()] = str(value[0] if isinstance(value, list) and value else value)
    return out


def _request_body(raw: object) -> dict[str, object]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, (str, bytes)) and raw:
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def _exchange(
    path: Path, position: int, *, status: int, headers: dict[str, str], body: object, request: object
) -> Exchange | None:
    if status != 200:
        return None
    data = (
        body if isinstance(body, bytes) else json.dumps(body).encode() if isinstance(body, dict) else str(body).encode()
    )
    if headers.get("content-encoding") == "gzip" or data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    text_start = data.lstrip()[:6]
    streamed = "event-stream" in headers.get("content-type", "") or text_start.startswith((b"event:", b"data:"))
    request_body = _request_body(request)
    model = request_body.get("model")
    return Exchange(
        name=f"{path.parent.name}/{path.name}#{position}",
        lane=LANE_FOLDERS[path.parent.name],
        streamed=streamed,
        body=data,
        requested_model=model if isinstance(model, str) else None,
        request=request_body,
    )


def exchanges_of(path: Path) -> list[Exchange]:
    """The successful exchanges one recording holds, in order."""
    if path.suffix in {".txt", ".sse"}:
        found = _exchange(
            path, 0, status=200, headers={"content-type": "text/event-stream"}, body=path.read_bytes(), request=None
        )
        return [found] if found else []
    out: list[Exchange] = []
    if path.suffix == ".yaml":
        cassette = yaml.safe_load(path.read_text())
        for i, interaction in enumerate(cassette.get("interactions", [])):
            response, request = interaction["response"], interaction["request"]
            body = response["body"].get("string", b"")
            req = request.get("body") or request.get("parsed_body")
            found = _exchange(
                path,
                i,
                status=response["status"]["code"],
                headers=_headers(response.get("headers")),
                body=body,
                request=req,
            )
            if found:
                out.append(found)
    elif path.suffix == ".json":
        for i, record in enumerate(json.loads(path.read_text())):
            response, request = record["response"], record["request"]
            found = _exchange(
                path,
                i,
                status=response["status_code"],
                headers=_headers(response.get("headers")),
                body=response["body"],
                request=request.get("body"),
            )
            if found:
                out.append(found)
    return out


def all_exchanges() -> list[Exchange]:
    """Every successful exchange of every recording of the three lanes."""
    return [exchange for path in recording_files() for exchange in exchanges_of(path)]
