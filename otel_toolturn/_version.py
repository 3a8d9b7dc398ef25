"""The version of otel-toolturn, written once: the build (``pyproject.toml``) and the telemetry scope read it here."""

__version__ = "0.1.0"
