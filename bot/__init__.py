"""The chat surfaces: a platform-neutral core (answering, votes, reindex) and thin Slack and Teams adapters."""
