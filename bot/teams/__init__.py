"""Microsoft Teams on the Microsoft 365 Agents SDK: streamed answers with native citations, the feedback
loop, the `reindex` command, and the app package."""
