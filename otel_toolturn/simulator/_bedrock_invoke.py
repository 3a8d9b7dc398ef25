"""Amazon Bedrock Runtime InvokeModel with an Anthropic Messages body, as the simulator speaks it.

Routes (``route``): ``POST /model/{modelId}/invoke`` and ``/model/{modelId}/invoke-with-response-stream``
(the model id percent-decoded); they become the request's ``model`` and ``stream``. The body is
Anthropic Messages JSON as Bedrock takes it (``anthropic_version``, ``messages``, ``system``,
``tools``, ``max_tokens``, …; the model is in the path), so the request is the Anthropic lane's: its
tool-turn rules, its prefix check of signed thinking (``_anthropic.admit``) and its reply
(``_anthropic.reply_body``). Requests are not signed-checked: any credentials do.

Stream (``invoke-with-response-stream``): the Anthropic Messages events (``_anthropic.reply_frames``,
misbehaviours applied), each in one AWS event stream message (``_eventstream``) of event type
``chunk`` whose payload is ``{"bytes": <the event's JSON, base64>}``, as botocore reads a
``PayloadPart``.

Errors: as the service answers an invalid invoke, HTTP 400 with the header
``x-amzn-ErrorType: ValidationException:…`` and ``{"message": …}`` (the words Anthropic's API uses);
botocore raises them as ``ClientError`` with the code ``ValidationException``.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping, Sequence
from typing import Final
from urllib.parse import unquote

from otel_toolturn.simulator import _anthropic, _bedrock
from otel_toolturn.simulator._eventstream import CONTENT_TYPE, encode_event
from otel_toolturn.simulator._frames import Frame
from otel_toolturn.simulator._script import Misbehaviour
from otel_toolturn.simulator._wire import Wire

PATH: Final = "/model/{modelId}/invoke"
"""The lane's documented path; ``route`` reads it and its streaming twin."""

ROUTE: Final = re.compile(r"/model/(?P<model>[^/]+)/(?P<method>invoke|invoke-with-response-stream)")


def route(path: str) -> Mapping[str, object] | None:
    """The request fields ``path`` carries (``model``, ``stream``); ``None`` when it is not an invoke path."""
    match = ROUTE.fullmatch(path)
    if match is None:
        return None
    return {"model": unquote(match["model"]), "stream": match["method"] == "invoke-with-response-stream"}


def reply_frames(
    reply: Mapping[str, object], *, request: Mapping[str, object], misbehaviours: Sequence[Misbehaviour]
) -> list[Frame]:
    """``reply`` as Anthropic's events, each one Bedrock ``chunk`` carrying the event's JSON as base64 ``bytes``."""
    frames = _anthropic.reply_frames(reply, request=request, misbehaviours=misbehaviours)
    return [Frame(data={"bytes": _base64(frame)}, role=frame.role, event="chunk") for frame in frames]


def _base64(frame: Frame) -> str:
    """The frame's event as the base64 of its JSON (a text frame, the ``bad_frame`` misbehaviour, as it is)."""
    data = frame.data if isinstance(frame.data, str) else json.dumps(frame.data, separators=(",", ":"))
    return base64.b64encode(data.encode()).decode()


WIRE = Wire(
    lane="anthropic.messages",
    path=PATH,
    transcript_field="messages",
    head_fields=_anthropic.WIRE.head_fields,
    admit=_anthropic.admit,
    reply_body=_anthropic.reply_body,
    reply_frames=reply_frames,
    error_body=_bedrock.error_body,
    route=route,
    error_headers={"x-amzn-ErrorType": _bedrock.ERROR_TYPE},
    stream_content_type=CONTENT_TYPE,
    encode_frame=encode_event,
)
