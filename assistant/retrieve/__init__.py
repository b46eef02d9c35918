"""Retrieval: `Retriever.load(settings)` then `search(query, k=5, kinds=None, lang=None) -> list[Hit]`
(`assistant.retrieve.retriever`); `Hit` lives in `assistant.retrieve.hit`. Kept import-light: loading
the models happens in `Retriever.load`, not on import."""
