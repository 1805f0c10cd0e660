"""Redis and in-process caches for the answering pipeline (see the cited-answers issue)."""
