"""Per-source feedback and the admins' review, for every chat surface: what a vote on a cited passage
does, the review of a scope's flagged passages, down-voted answers and flagged documents, an admin's
confirm or undo, and which passages may be shown to whom. Each surface parses its own events, calls these
and formats the neutral values they return.

Every function here blocks (SQLite, the embedder, the live index): call them off the event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot.core.scopes.documents import may_show
from bot.core.services import CoreServices
from rag.feedback import CitedChunk, RecordedAnswer, citation_target, summary
from rag.words.languages import detect_language
from rag.types import Chunk, Scope

_log = logging.getLogger(__name__)

DAY = 86400.0
REVIEW_DAYS = 30
REVIEW_SCAN = 200  # answers and passages read for a review (a surface shows the first few and counts the rest)
WRONG, HELPED = "wrong", "helped"  # the two votes on a source, as surfaces name them in their controls
VALUES = {WRONG: -1, HELPED: 1}
GONE = "Sorry, that answer is no longer on record."

# What a flagged passage's status means, as the review says it.
STATUS = {
    "demoted": "ranks lower for similar questions",
    "pending": "not demoted yet: it needs more people's flags, or an admin's confirmation",
    "faded": "the flags are too old to count any more",
    "passage changed": "a reindex changed this passage, so these votes no longer apply to it",
}


@dataclass(frozen=True)
class ReviewWords:
    """The review's wording, the same on every surface (each adds its own marks and emoji)."""

    answers: str = f"Most down-voted answers · last {REVIEW_DAYS} days"
    passages: str = f"Flagged passages · last {REVIEW_DAYS} days"
    no_answers: str = "No down-voted answers in this period."
    no_passages: str = "No flagged passages in this period."
    most_flagged: str = "Documents with the most flags:"


WORDS = ReviewWords()


def outside(hidden: int, one: str, many: str, where: str) -> str:
    """How many entries of a kind the reviewer's scope left out; `where`: the place their scope is that of."""
    return (f"{hidden} more {one if hidden == 1 else many} outside your scope (they concern documents you could "
            f"not be answered from {where}).")


def agreeing(min_voters: int) -> str:
    """Who must agree before a flag demotes a passage, said after "once"."""
    return "another person agrees" if min_voters == 2 else f"{min_voters} people in all agree"


def rules_note(min_voters: int, bold: str) -> str:
    """The review's footnote on what votes do; `bold` is the surface's bold mark."""
    return (f"A flagged passage ranks lower for questions like the ones it was flagged on once {agreeing(min_voters)} "
            "(a “this source helped” counts against a flag), or at once when an admin flags it or confirms the "
            f"demotion. {bold}Undo{bold} makes the votes so far stop counting. Votes fade over time.")


@dataclass(frozen=True)
class SourceVoted:
    """What a vote on a cited passage did, as its voter is told."""

    recorded: bool  # False: the answer, or that citation of it, is no longer on record
    helped: bool = False
    demoted: bool = False  # the passage now ranks lower for the answer's question where it was asked
    admin: bool = False
    min_voters: int = 2

    def sentence(self) -> str:
        """The confirmation, in plain words (a surface adds its own marks)."""
        if not self.recorded:
            return GONE
        if self.helped:
            return "Thanks — marked as helpful."
        flagged = "Marked as a wrong source — thanks."
        if self.demoted:
            why = "an admin's flag counts at once" if self.admin else "others flagged it too"
            return f"{flagged} It now ranks lower for similar questions ({why})."
        if self.admin:
            return f"{flagged} Others said this passage helped, so it does not rank lower yet."
        return f"{flagged} It will rank lower for similar questions once {agreeing(self.min_voters)}, or an admin confirms."


def vote_on_source(services: CoreServices, answer_id: str, marker: int, user: str, value: int, admin: bool,
                   platform: str | None = None) -> SourceVoted:
    """Record `user`'s vote (+1 helped, -1 wrong) on citation `marker` of an answer, and say what it does now.
    The vote row keeps who voted, whether as an admin, where and when: the store is the audit."""
    store = services.feedback
    recorded = store.answer(answer_id)
    if recorded is None or not 1 <= marker <= len(recorded.citations):
        return SourceVoted(recorded=False)
    store.vote(answer_id, user, citation_target(marker), value, recorded.channel, admin=admin, platform=platform)
    min_voters = services.adjuster.rules.min_voters
    if value > 0:
        return SourceVoted(recorded=True, helped=True, admin=admin, min_voters=min_voters)
    demoted = demoted_now(services, recorded, recorded.citations[marker - 1])
    if demoted is None:  # cannot tell: say what the rules do
        demoted = admin
    return SourceVoted(recorded=True, demoted=demoted, admin=admin, min_voters=min_voters)


def demoted_now(services: CoreServices, recorded: RecordedAnswer, cited: CitedChunk) -> bool | None:
    """Whether the votes now demote the passage for the answer's question where it was asked (None: no way
    to tell)."""
    try:
        vector = services.answerer.question_vector(recorded.question, recorded.index_version)
    except Exception:  # noqa: BLE001 - e.g. the embedder is unreachable: the vote is kept anyway
        _log.warning("could not tell whether the flag demotes the passage", exc_info=True)
        return None
    # Votes count within the collections they were given in: the answer's, as recorded.
    where = Scope.parse(recorded.scope)
    return cited.chunk_id in services.adjuster.demotions(vector, detect_language(recorded.question), where)


@dataclass
class Review:
    """The admins' review for one scope: the entries of documents it may read, the others only counted."""

    items: dict[str, list[dict[str, Any]]]  # "answers", "passages", "documents" as rag.feedback.summary() has them
    hidden: dict[str, int] = field(default_factory=dict)  # per kind: how many were outside the scope
    min_voters: int = 2


def admin_review(services: CoreServices, scope: Scope, days: int = REVIEW_DAYS, scan: int = REVIEW_SCAN) -> Review:
    """The last `days` of feedback as the admin reviewing in `scope` may see it."""
    manifest = services.manifest()
    live = services.index.live() if services.index is not None and manifest is not None else None
    since = services.feedback.now() - days * DAY
    everything = summary(services.feedback, services.adjuster, limit=scan, since=since, live=live)
    documents = services.documents()

    def readable(file: str) -> bool:
        return may_show(documents, scope, file, where_answered=False)

    def answer_readable(entry: dict) -> bool:
        """Every document it may show readable (one no longer indexed: none): what it cites, and what it may
        show uncited — a refusal names documents the asker could read. One recorded before those were kept is
        shown only with citations."""
        recorded = services.feedback.answer(entry["answer_id"])
        if recorded is None or (recorded.sources is None and not recorded.citations):
            return False
        return all(readable(f) for f in [*(c.file for c in recorded.citations), *(recorded.sources or ())])

    tests = {"answers": answer_readable, "passages": lambda e: readable(e["file"]),
             "documents": lambda e: readable(e["file"])}
    mine = {key: [e for e in everything.get(key, []) if test(e)] for key, test in tests.items()}
    hidden = {key: len(everything.get(key, [])) - len(mine[key]) for key in tests}
    return Review(mine, hidden, services.adjuster.rules.min_voters)


def cited_passage(cited: CitedChunk) -> Chunk:
    """A cited passage as a surface shows it: the text as it was cited, not as the index has it now."""
    return Chunk(cited.chunk_id, cited.file, cited.title, (), cited.text, 0, len(cited.text), None, None, "", "",
                 cited.url)


@dataclass(frozen=True)
class VotedPassage:
    """A passage with votes: as it was last cited, and the questions it was voted on (newest first)."""

    cited: CitedChunk
    questions: list[str]


def voted_passage(services: CoreServices, chunk_id: str) -> VotedPassage | None:
    """Undone votes included: an admin may look after an undo."""
    votes = sorted((v for v in services.feedback.citation_votes() if v.chunk_id == chunk_id), key=lambda v: v.updated)
    if not votes:
        return None
    return VotedPassage(votes[-1].cited, list(dict.fromkeys(v.question for v in reversed(votes))))


def passage_for_admin(services: CoreServices, chunk_id: str, scope: Scope) -> VotedPassage | None:
    """A flagged passage to show an admin reviewing in `scope`; None when it has no votes or is outside the
    scope (the review never listed it: a hand-made action value gets nothing)."""
    passage = voted_passage(services, chunk_id)
    if passage is None or not may_show(services.documents(), scope, passage.cited.file, where_answered=False):
        return None
    return passage


@dataclass(frozen=True)
class VerdictGiven:
    """An admin's confirm or undo, done: on which passage, and its status after a confirm."""

    action: str  # "confirm" or "undo"
    location: str | None  # the passage's footnote text (None: never cited with votes)
    status: str | None = None  # after a confirm: "demoted" unless e.g. the passage changed

    def sentence(self, emphasis: Callable[[str], str]) -> str:
        """What was done, in plain words; `emphasis` marks the passage's location and status the surface's way."""
        where = emphasis(self.location) if self.location else "the passage"
        if self.action == "undo":
            return f"Undone for {where}: the votes on it so far no longer count, so it ranks as before."
        if self.status == "demoted":
            return f"Demotion confirmed for {where}: it now ranks lower for similar questions."
        return f"Confirmed for {where}; its status is now {emphasis(self.status or 'unknown')}."


NOT_IN_REVIEW = "That passage is not in your review, so nothing changed."


def give_verdict(services: CoreServices, chunk_id: str, action: str, user: str,
                 scope: Scope) -> VerdictGiven | None:
    """Confirm or undo what the votes on a passage do; the store keeps who did it and when. None (nothing
    done) for a passage of a document outside the reviewer's `scope`: their review never listed it."""
    passage = voted_passage(services, chunk_id)
    if passage is not None and not may_show(services.documents(), scope, passage.cited.file, where_answered=False):
        return None
    services.feedback.record_verdict(chunk_id, action, user)
    location = passage.cited.location if passage else None
    if action == "undo":
        return VerdictGiven(action, location)
    status = next((a.status for a in services.adjuster.adjustments() if a.chunk_id == chunk_id), None)
    return VerdictGiven(action, location, status)


@dataclass(frozen=True)
class SourceToShow:
    """A citation of an answer someone asked to see: None when the answer or citation is gone; `allowed`
    False when the viewer's scope may not read it where they asked."""

    cited: CitedChunk | None
    allowed: bool = False


def source_to_show(services: CoreServices, answer_id: str, marker: int, scope: Scope,
                   conversation: str) -> SourceToShow:
    """Citation `marker` of an answer, asked for in `conversation` by a viewer reading in `scope`."""
    recorded = services.feedback.answer(answer_id)
    if recorded is None or not 1 <= marker <= len(recorded.citations):
        return SourceToShow(None)
    cited = recorded.citations[marker - 1]
    allowed = may_show(services.documents(), scope, cited.file, where_answered=recorded.channel == conversation)
    if not allowed:
        _log.info("source %s of answer %s not shown in %s: outside its scope", marker, answer_id, conversation)
    return SourceToShow(cited, allowed)
