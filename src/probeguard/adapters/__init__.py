"""Framework adapters under a short name: ``probeguard.adapters.langchain`` is
``probeguard.pipeline.adapters.langchain`` (needs ``probeguard[langchain]``) and
``probeguard.adapters.llamaindex`` is ``probeguard.pipeline.adapters.llamaindex`` (needs
``probeguard[llamaindex]``). The callable and HTTP adapters are ``probeguard.CallablePipeline``
and ``probeguard.HttpPipeline``."""
