"""Slack bot: Bolt handlers on top of the answering pipeline (see the Slack bot issue)."""
