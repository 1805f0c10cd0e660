"""The chat surfaces: a platform-neutral core (answering, votes, reindex) and a thin Slack adapter."""
