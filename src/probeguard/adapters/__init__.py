"""Framework adapters under a short name: ``probeguard.adapters.langchain`` is
``probeguard.pipeline.adapters.langchain`` (needs ``probeguard[langchain]``). The callable
and HTTP adapters are ``probeguard.CallablePipeline`` and ``probeguard.HttpPipeline``."""
