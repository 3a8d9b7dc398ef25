"""The only place that imports an SDK or OpenTelemetry: patching, the request hook, stream proxies."""
