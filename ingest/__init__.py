"""Ingest: kb, skill folders and source checkouts -> chunks -> FAISS channels + BM25 under
`Settings.index_dir`. Entry points: `ingest.pipeline.build_index`, `ingest.status.index_status`."""
