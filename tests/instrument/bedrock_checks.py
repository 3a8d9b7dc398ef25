"""What the boto3 and aiobotocore ``bedrock-runtime`` tests check alike, once the call has been made.

Each check reads the simulator's requests and the recorded telemetry of one call of a broken history
(``tests.bedrock_wire``): sent valid and repaired, or (observe mode) sent as written and refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from otel_toolturn import validate
from otel_toolturn.instrument import names
from otel_toolturn.simulator import Simulator
from otel_toolturn.simulator._server import Answer
from tests.bedrock_wire import MODEL, REPAIR_OF
from tests.instrument.conftest import Otel

LANE: Final = "bedrock.converse"
INVOKE_LANE: Final = "anthropic.messages"

STUBBED_CONVERSE: Final = {
    "output": {"message": {"role": "assistant", "content": [{"text": "stubbed"}]}},
    "stopReason": "end_turn",
    "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
    "metrics": {"latencyMs": 1},
}
"""A Converse response a stubber answers with (nothing is sent)."""


def the_span(otel: Otel) -> Any:
    """The one call span recorded."""
    (span,) = otel.call_spans()
    return span


def check_repaired(otel: Otel, sim: Simulator, name: str, *, streamed: bool, lane: str = LANE) -> None:
    """The one request reached the wire valid and was answered; span, event and metric name the repair of ``name``."""
    (request,) = sim.requests
    assert (request.lane, request.status) == (lane, 200)
    assert validate(request.body["messages"], lane=lane) == []  # type: ignore[arg-type,index]
    span = the_span(otel)
    assert span.attributes[names.PROVIDER] == "aws.bedrock"
    assert span.attributes[names.GEN_AI_OPERATION_NAME] == "chat"
    assert span.attributes[names.GEN_AI_REQUEST_MODEL] == MODEL
    assert span.attributes[names.LANE] == lane
    assert span.attributes[names.GEN_AI_REQUEST_STREAM] is streamed
    assert span.attributes[names.GEN_AI_USAGE_OUTPUT_TOKENS] > 0
    assert span.attributes[names.REPAIRS_FORMS] == (REPAIR_OF[name],)
    assert span.status.status_code.name == "UNSET"
    (event,) = otel.events(names.EVENT_REPAIR)
    assert event[names.REPAIR_FORM] == REPAIR_OF[name]
    assert otel.total(names.REPAIRS.name, toolturn__lane=lane, gen_ai__provider__name="aws.bedrock") == 1
    assert otel.total(names.INSTRUMENTATION_ERRORS.name) == 0


def check_refused(otel: Otel, sim: Simulator, name: str, messages: list[dict[str, object]]) -> None:
    """Observe mode: ``messages`` went out as written and were refused; the span and event say what was wrong."""
    (request,) = sim.requests
    assert request.body["messages"] == messages  # type: ignore[index]
    span = the_span(otel)
    assert span.attributes[names.ERROR_TYPE] == "ValidationException"
    assert span.attributes[names.MODE] == "observe"
    (event,) = otel.events(names.EVENT_REPAIR)
    assert event[names.REPAIR_FORM] == REPAIR_OF[name]


def busy_once(sim: Simulator, attempts: list[int]) -> Callable[[str, bytes], Answer]:
    """The simulator's answer, but a 503 the service retries on the first attempt; each attempt kept in ``attempts``."""
    answer = sim.answer

    def answered(path: str, raw: bytes) -> Answer:
        attempts.append(len(attempts))
        if len(attempts) == 1:
            headers = {"x-amzn-ErrorType": "ServiceUnavailableException:http://internal.amazon.com/"}
            return Answer(status=503, body={"message": "Service unavailable"}, headers=headers)
        return answer(path, raw)

    return answered


def check_retried_once(otel: Otel, response: Any, attempts: list[int]) -> None:
    """Two attempts went out for one call: one span, one request and one repair recorded."""
    assert response["ResponseMetadata"]["RetryAttempts"] == 1
    assert len(attempts) == 2
    assert len(otel.call_spans()) == 1
    assert otel.total(names.REQUESTS.name, toolturn__lane=LANE) == 1
    assert len(otel.events(names.EVENT_REPAIR)) == 1
