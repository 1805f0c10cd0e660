"""The Teams bot's command words, apart from their handlers: the app package lists them without loading
the Agents SDK (`ai-employee teams-package` stays quick)."""

COMMAND = "reindex"
SCOPE_COMMAND = "scope"
REVIEW_COMMAND = "review"
SOURCES_COMMAND = "sources"  # only with declared sources (AIE_SOURCES_FILE)
