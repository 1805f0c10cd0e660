"""Feedback: durable votes (store), what they do to retrieval (adjust), admin review, and the votes as
an evaluation set."""

from rag.feedback.adjust import Adjustment, FeedbackAdjuster, FeedbackRules, reorder
from rag.feedback.evalset import evaluation_rows, write_evaluation_set
from rag.feedback.review import down_voted_answers, summary
from rag.feedback.store import (
    ANSWER,
    REASONS,
    CitationVote,
    CitedChunk,
    FeedbackStore,
    PassageVerdict,
    RecordedAnswer,
    Vote,
    citation_target,
)

__all__ = [
    "ANSWER", "REASONS", "Adjustment", "CitationVote", "CitedChunk", "FeedbackAdjuster", "FeedbackRules",
    "FeedbackStore", "PassageVerdict", "RecordedAnswer", "Vote", "citation_target", "down_voted_answers",
    "evaluation_rows", "reorder", "summary", "write_evaluation_set",
]
