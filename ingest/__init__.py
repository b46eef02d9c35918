"""Ingest: kb, skill folders and source checkouts -> chunks -> FAISS channels + BM25 under
`Settings.index_dir`. Entry point: `ingest.pipeline.build_index`; what it shares with retrieval
(layout, freshness, channels, BM25, manifest, encoders) is `assistant.index`."""
