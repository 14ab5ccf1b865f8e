"""retrievers."""
