"""The instruments of one instrumentation: a tracer, one meter instrument per contract name, a logger.

Role: the only place that creates OpenTelemetry instruments. Every name comes from ``names``.
Every method that touches OpenTelemetry is guarded: a failure is counted in
``toolturn.instrumentation.errors`` (with its stage), logged at debug, and never raised.

Events go out twice, driven by what the application configured: as span events (Jaeger and
Tempo show these) and, when a logger provider is configured, as log records of the same name
(the form the OpenTelemetry specification is moving to).

Metric attribute sets are built once per lane and provider (``Labels``) and shared by every call:
OpenTelemetry copies what it is given, so a shared set is never mutated.

What one call records goes out through its ``CallSink``: these instruments, the call's lane and
label sets, and the call record's own events hook (which holds events while the record waits for
the SDK's span).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from opentelemetry import metrics, trace
from opentelemetry._logs import LoggerProvider, get_logger, get_logger_provider
from opentelemetry._logs._internal import NoOpLoggerProvider, ProxyLoggerProvider
from opentelemetry.context import Context
from opentelemetry.metrics import Counter, Histogram, MeterProvider
from opentelemetry.trace import Span, TracerProvider
from opentelemetry.util.types import AttributeValue

from otel_toolturn import _version
from otel_toolturn._vocab import Lane
from otel_toolturn.instrument import names
from otel_toolturn.instrument._config import LANES_OF, NAMES_OF, Mode, Options, ProviderName

_log = logging.getLogger("otel_toolturn.instrument")

Attributes = Mapping[str, AttributeValue]

_MAX_CACHED_SETS = 256
"""How many attribute sets one ``Labels`` keeps: past it, a new set is built for each use and not kept."""


def _configured(provider: LoggerProvider) -> bool:
    """Whether ``provider`` is one the application set up (not the API's proxy or no-op default)."""
    return not isinstance(provider, (ProxyLoggerProvider, NoOpLoggerProvider))


class Labels:
    """The metric attribute sets of one lane and ``gen_ai.provider.name``, built once and shared (never mutated).

    ``base``: lane and provider. ``requests``: those and the mode. ``with_((key, value), ...)``:
    ``base`` and the given attributes (a repair's form and lossiness, a drop's cause...), cached.
    """

    __slots__ = ("_sets", "base", "requests")

    def __init__(self, lane: Lane, provider: ProviderName, mode: Mode) -> None:
        self.base: Attributes = {names.LANE: lane, names.PROVIDER: provider}
        self.requests: Attributes = {names.LANE: lane, names.PROVIDER: provider, names.MODE: mode}
        self._sets: dict[tuple[tuple[str, AttributeValue], ...], Attributes] = {}

    def with_(self, *pairs: tuple[str, AttributeValue]) -> Attributes:
        """``base`` and the attributes ``pairs`` (after it, in order)."""
        found = self._sets.get(pairs)
        if found is None:
            found = {**self.base, **dict(pairs)}
            if len(self._sets) < _MAX_CACHED_SETS:
                self._sets[pairs] = found
        return found


class Telemetry:
    """The tracer, the contract's instruments and the optional event logger, for one ``instrument()``."""

    def __init__(
        self,
        *,
        options: Options,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        logger_provider: LoggerProvider | None = None,
    ) -> None:
        self.options = options
        self.tracer_provider = tracer_provider
        """The tracer provider asked for (``None``: the global one, read when used)."""
        version = _version.__version__
        self.tracer = trace.get_tracer(
            names.INSTRUMENTATION_NAME, version, tracer_provider=tracer_provider, schema_url=names.SCHEMA_URL
        )
        meter = metrics.get_meter(
            names.INSTRUMENTATION_NAME, version, meter_provider=meter_provider, schema_url=names.SCHEMA_URL
        )
        self._counters: dict[str, Counter] = {
            i.name: meter.create_counter(i.name, unit=i.unit, description=i.description)
            for i in names.INSTRUMENTS
            if i.kind == "counter"
        }
        self._law_duration: Histogram = meter.create_histogram(
            names.LAW_DURATION.name,
            unit=names.LAW_DURATION.unit,
            description=names.LAW_DURATION.description,
            explicit_bucket_boundaries_advisory=list(names.LAW_DURATION_BUCKETS),
        )
        self._client_duration: Histogram = meter.create_histogram(
            names.CLIENT_OPERATION_DURATION.name,
            unit=names.CLIENT_OPERATION_DURATION.unit,
            description=names.CLIENT_OPERATION_DURATION.description,
            explicit_bucket_boundaries_advisory=list(names.CLIENT_DURATION_BUCKETS),
        )
        self._client_tokens: Histogram = meter.create_histogram(
            names.CLIENT_TOKEN_USAGE.name,
            unit=names.CLIENT_TOKEN_USAGE.unit,
            description=names.CLIENT_TOKEN_USAGE.description,
            explicit_bucket_boundaries_advisory=[float(b) for b in names.CLIENT_TOKEN_BUCKETS],
        )
        self._chunk_times: dict[bool, Histogram] = {
            first: meter.create_histogram(
                instrument.name,
                unit=instrument.unit,
                description=instrument.description,
                explicit_bucket_boundaries_advisory=list(names.CLIENT_DURATION_BUCKETS),
            )
            for first, instrument in (
                (True, names.CLIENT_TIME_TO_FIRST_CHUNK),
                (False, names.CLIENT_TIME_PER_OUTPUT_CHUNK),
            )
        }
        chosen = logger_provider if logger_provider is not None else get_logger_provider()
        self._logger = (
            get_logger(names.INSTRUMENTATION_NAME, version, logger_provider=chosen) if _configured(chosen) else None
        )
        self._labels: dict[tuple[Lane, ProviderName], Labels] = {
            (lane, name): Labels(lane, name, options.mode)
            for provider, lanes in LANES_OF.items()
            for lane in lanes
            for name in NAMES_OF[provider]
        }
        for provider in options.providers:
            for lane in LANES_OF[provider]:
                for name in NAMES_OF[provider]:
                    self.add(names.LOSSY_PROJECTIONS, 0, self.labels(lane, name).base)

    def labels(self, lane: Lane, provider: ProviderName) -> Labels:
        """The shared metric attribute sets of ``lane`` and ``provider`` (a ``gen_ai.provider.name`` value)."""
        found = self._labels.get((lane, provider))
        if found is None:
            found = self._labels[lane, provider] = Labels(lane, provider, self.options.mode)
        return found

    @property
    def logs(self) -> bool:
        """Whether events also go out as log records (a logger provider is configured)."""
        return self._logger is not None

    def error(self, stage: names.ErrorStage, exc: BaseException) -> None:
        """Count and log (at debug) an error caught inside otel-toolturn; never raises."""
        try:
            _log.debug("otel-toolturn: %s stage failed; the call proceeds", stage, exc_info=exc)
            self._counters[names.INSTRUMENTATION_ERRORS.name].add(
                1, {names.ERROR_STAGE: stage, names.ERROR_TYPE: type(exc).__qualname__}
            )
        except Exception:  # noqa: BLE001 - the last guard: nothing may escape
            _log.debug("otel-toolturn: could not count an instrumentation error", exc_info=True)

    def add(self, instrument: names.Instrument, value: int, attributes: Attributes) -> None:
        """Add ``value`` to a counter of the contract (guarded)."""
        try:
            self._counters[instrument.name].add(value, attributes)
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.error("metric", exc)

    def law_duration(self, seconds: float, attributes: Attributes) -> None:
        """Record the law's time on one request (guarded)."""
        try:
            self._law_duration.record(seconds, attributes)
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.error("metric", exc)

    def client_call(
        self, seconds: float, tokens: Sequence[tuple[str, int]], attributes: dict[str, AttributeValue]
    ) -> None:
        """Record one call in the GenAI conventions' client metrics: its duration, and its tokens by type (guarded)."""
        try:
            self._client_duration.record(seconds, attributes)
            for token_type, count in tokens:
                self._client_tokens.record(count, {**attributes, names.GEN_AI_TOKEN_TYPE: token_type})
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.error("metric", exc)

    def chunk_times(self, first: float, later: Iterable[float], attributes: Attributes) -> None:
        """A stream's chunk times in the conventions' chunk metrics: the first's, then each later one (guarded)."""
        try:
            self._chunk_times[True].record(first, attributes)
            record = self._chunk_times[False].record
            for seconds in later:
                record(seconds, attributes)
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.error("metric", exc)

    def events(self, span: Span | None, name: str, batch: Sequence[Attributes], context: Context | None = None) -> None:
        """Emit a contract event per attribute set of ``batch``: on ``span`` and, when configured, as a log record.

        Each event is guarded on its own. The log records carry ``context`` (``span`` made current
        in it when not given).
        """
        logger = self._logger
        try:
            recording = span if span is not None and span.is_recording() else None
            if logger is not None and context is None and span is not None:
                context = trace.set_span_in_context(span)
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.error("event", exc)
            return
        for attributes in batch:
            try:
                if recording is not None:
                    recording.add_event(name, attributes)
                if logger is not None:
                    logger.emit(event_name=name, attributes=attributes, context=context)
            except Exception as exc:  # noqa: BLE001, PERF203 - never breaks the call; each event guarded alone
                self.error("event", exc)

    def set_attributes(self, span: Span | None, attributes: Attributes) -> None:
        """Set ``attributes`` (no ``None`` values) on ``span`` in one call (guarded)."""
        if span is None or not attributes:
            return
        try:
            if span.is_recording():
                span.set_attributes(attributes)
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.error("span", exc)


@dataclass(frozen=True, slots=True)
class CallSink:
    """Where one call's request and response telemetry goes (made by its ``CallRecord``).

    ``events(name, batch)``: one event per attribute set, on the call's span (or held for it).
    ``own_span``: the call's span is (or will be) otel-toolturn's own, so the conventions' own
    request and response attributes go on it; another owner's span gets only the contract's.
    """

    telemetry: Telemetry
    lane: Lane
    labels: Labels
    events: Callable[[str, Sequence[Attributes]], None]
    own_span: bool

    def event(self, name: str, attributes: Attributes) -> None:
        """One event of ``name`` with ``attributes``."""
        self.events(name, (attributes,))
