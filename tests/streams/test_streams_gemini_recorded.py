"""The recorded Gemini traffic beside the repository, replayed through the observer, the check and the SDK."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Final

import pydantic
import pytest
import yaml

from otel_toolturn.streams import StreamReport, check_response, observer_for, sse_data
from tests.streams._recordings import RECORDED, absent
from tests.streams._sdk import gemini_client, gemini_response

LANE: Final = "gemini.generate_content"
FOLDER: Final = RECORDED / "gemini"
_MODEL: Final = re.compile(r"/models/([^/:]+):")

if not FOLDER.is_dir():
    absent("the shared Gemini recordings folder", module=True)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Recorded:
    """One recorded successful Gemini response: its chunks as JSON dicts, the body, and the model asked for."""

    name: str
    chunks: list[dict[str, object]]
    body: bytes
    sse: bool
    streamed: bool
    requested_model: str


def recorded() -> list[Recorded]:
    out: list[Recorded] = []
    for path in sorted(Path(FOLDER).glob("*.yaml")):
        for i, interaction in enumerate(yaml.safe_load(path.read_text())["interactions"]):
            if interaction["response"]["status"]["code"] != 200:
                continue
            uri = interaction["request"]["uri"]
            body = interaction["response"]["body"]["string"]
            data = body.encode() if isinstance(body, str) else body
            sse = data.lstrip().startswith(b"data:")
            parsed = [json.loads(d) for d in sse_data(data)] if sse else json.loads(data)
            model = _MODEL.search(uri)
            out.append(
                Recorded(
                    name=f"{path.name}#{i}",
                    chunks=parsed if isinstance(parsed, list) else [parsed],
                    body=data,
                    sse=sse,
                    streamed=":streamGenerateContent" in uri,
                    requested_model=model.group(1) if model else "requested-model",
                )
            )
    return out


RECORDINGS: Final = recorded()


def stated(chunks: list[dict[str, object]]) -> tuple[list[tuple[str, str, object]], tuple[str, ...], int, int]:
    """What the recording itself states: its calls, its finish reasons, prompt and output tokens (last usage)."""
    calls: list[tuple[str, str, object]] = []
    finishes: list[str] = []
    usage: dict[str, int] = {}
    numbers = {1: "STOP", 2: "MAX_TOKENS"}
    for chunk in chunks:
        usage = chunk.get("usageMetadata") or usage  # type: ignore[assignment]
        for candidate in chunk.get("candidates", []):  # type: ignore[attr-defined]
            for part in candidate.get("content", {}).get("parts", []):
                if "functionCall" in part:
                    call = part["functionCall"]
                    calls.append((call.get("id", ""), call["name"], call.get("args", {})))
            if "finishReason" in candidate:
                reason = candidate["finishReason"]
                finishes.append(numbers[reason] if isinstance(reason, int) else reason)
    output = usage.get("candidatesTokenCount", 0) + usage.get("thoughtsTokenCount", 0)
    return calls, tuple(finishes), usage["promptTokenCount"], output


def ours(report: StreamReport) -> tuple[list[tuple[str, str, object]], tuple[str, ...], int | None, int | None]:
    return (
        [(c.call_id, c.name, dict(c.arguments)) for c in report.calls],
        report.finish_reasons,
        report.usage.input_tokens,
        report.usage.output_tokens,
    )


def replayed(recording: Recorded) -> StreamReport:
    observer = observer_for(LANE, requested_model=f"models/{recording.requested_model}")
    for chunk in recording.chunks:
        observer.feed(chunk)
    return observer.finish()


def test_the_recordings_cover_streams_calls_and_signatures() -> None:
    """The folder holds SSE streams, whole responses, calls and signed parts, so no case passes vacuously."""
    assert any(r.sse for r in RECORDINGS)
    assert any(not r.streamed for r in RECORDINGS)
    assert any(b"functionCall" in r.body for r in RECORDINGS)
    assert any(b"thoughtSignature" in r.body for r in RECORDINGS)
    assert NUMBERED


@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda r: r.name)
def test_a_recording_reports_what_it_states(recording: Recorded) -> None:
    """Calls (ids, names, arguments), finish reasons and usage as recorded; the model as asked; nothing dropped."""
    report = (
        replayed(recording)
        if recording.streamed
        else check_response(LANE, recording.chunks[0], requested_model=f"models/{recording.requested_model}")
    )
    assert ours(report) == stated(recording.chunks)
    assert (report.drops, report.torn, report.ends_ignored, report.substituted_model) == ((), False, None, None)
    assert report.response_id == recording.chunks[0]["responseId"]
    signatures = re.findall(rb'"thoughtSignature": ?"([^"]+)"', recording.body.replace(b'\\"', b'"'))
    assert all(signature.decode() not in repr(report) for signature in signatures)


@pytest.mark.parametrize("recording", [r for r in RECORDINGS if r.sse], ids=lambda r: r.name)
def test_an_sse_recording_reads_the_same_through_the_sdk(recording: Recorded) -> None:
    """The real SDK's chunks over the recorded SSE body give the raw frames' report and are left as they were."""
    client = gemini_client(recording.body)
    chunks = list(client.models.generate_content_stream(model=recording.requested_model, contents="hi"))
    dumps = [chunk.model_dump() for chunk in chunks]
    observer = observer_for(LANE, requested_model=f"models/{recording.requested_model}")
    for chunk in chunks:
        observer.feed(chunk)
    assert [chunk.model_dump() for chunk in chunks] == dumps
    assert observer.finish() == replayed(recording)


NUMBERED: Final = [r for r in RECORDINGS if not r.streamed and b'"finishReason": 1' in r.body]


@pytest.mark.parametrize("recording", NUMBERED, ids=lambda r: r.name)
def test_numbered_finish_reasons_are_read_where_the_sdk_cannot(recording: Recorded) -> None:
    """A body sent with enum-encoding=int: the SDK's parser raises on its number; the check reads it as STOP."""
    with pytest.raises((AttributeError, pydantic.ValidationError)):  # which, depends on the google-genai release
        gemini_response(recording.body)
    report = check_response(LANE, recording.chunks[0], requested_model=None)
    assert report.finish_reasons == ("STOP",)
