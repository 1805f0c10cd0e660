"""What every chat surface shares and no chat platform shapes: answering a question into a reply, recording
answers and votes, reindexing with progress and a report, de-duplication and conversation memory."""
