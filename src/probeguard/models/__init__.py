"""Model runtimes shared by the judges and the pipeline: embedders (MiniLM ONNX, hashing,
sentence-transformers), generators (extractive, OpenAI-compatible, llama.cpp) and prompts."""
