"""Integrations with libraries that send provider requests without the patched SDK methods.

``otel_toolturn.integrations.litellm``: LiteLLM's SDK calls (``completion`` to OpenAI-compatible,
Anthropic, Gemini, Vertex AI and Bedrock providers, ``responses``, ``anthropic.messages``) and its proxy,
through LiteLLM's own callback hooks and its wrapped entry points (each call's span ends with the
call). ``init()`` registers it when LiteLLM is imported (the ``litellm`` provider); the proxy
names it in its config.
Importing a module here imports the library it integrates.
"""
