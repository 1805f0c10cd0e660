"""Slack: Bolt handlers, Block Kit messages, streaming into threads, the App Home tab and /reindex."""
