"""The index as both sides see it: what `ingest/` writes and `assistant/retrieve/` reads.

Encoders, the glossary view of text, the FAISS channels, the BM25 index, the manifest, the source
records and the directory layout with its freshness check. Nothing here imports `ingest` or
`assistant.retrieve`; both import this (tests/assistant/index/test_layers.py holds the line).
"""
