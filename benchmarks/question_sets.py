"""The question sets of benchmarks/answer_quality.py: which questions, against which documents, and how an
answer and a retrieved passage are judged.

  squad2     squad2/questions.jsonl (answerable and unanswerable) vs squad2/docs
  squad2-zh  squad2/questions-zh.jsonl (Chinese questions, English articles) vs squad2/docs
  lawref     lawref/questions.jsonl vs all of lawref/docs; refusal.jsonl vs lawref/docs without the files of
             refusal-exclude.txt (there those questions have no answer)
  lawref-en  lawref/questions-en.jsonl (English questions, Chinese statutes) vs all of lawref/docs
  lawref-en-more
             benchmarks/data/lawref_questions_en_more.jsonl: 40 more of lawref's questions (spread over all of
             it), put into English for this project, vs all of lawref/docs; gold by id (a check that what
             lawref-en gains is not fitted to its 26)
  squad2-zh-orig, lawref-en-orig, lawref-en-more-orig
             the same questions as squad2-zh, lawref-en and lawref-en-more, as first asked in the documents'
             language (matched by id): the same-language figures the cross-language ones are compared with
  handbook   benchmarks/data/handbook_questions.jsonl vs examples/handbook (colloquial, cross-language and
             near-topic unanswerable questions written for the sample handbook)
  squad2-other
             benchmarks/data/squad2_questions_other.jsonl: squad2-zh's questions written in German, French and
             Japanese (a language the bilingual dictionary does not know) vs squad2/docs; gold by id
  handbook-other
             benchmarks/data/handbook_questions_other.jsonl: questions about examples/handbook in German, French,
             Spanish, Portuguese, Italian, Japanese and Korean, answerable and near-topic unanswerable
  handbuch   benchmarks/data/handbuch_questions.jsonl vs benchmarks/data/handbuch: a knowledge base written in
             German (a third language), with German questions (answerable, near-topic and unrelated ones it
             does not answer) and a few in English and Chinese
  handbook-chat
             handbook's questions as typed in a chat: each wrapped in a greeting, a preamble or thanks
             (`CHAT_FRAMINGS`, in turn), judged by the same gold — the answer should not change
  trilingual examples/handbook and benchmarks/data/handbuch as one knowledge base of three languages (a
             China office, a German one and the global English rules): handbook's questions and handbuch's
             German ones, each judged by its own set's gold (an asker's own office's rule where it has one)
  clef-handbook, 18f-travel-leave, apollo-zh, tidb-dashboard-zh, pagerduty-incident,
  dolphinscheduler-contribute-zh
             the held-out corpora of the broad evaluation (benchmarks/corpora/README.md): public knowledge bases
             at a pinned commit, materialised outside the project by benchmarks/corpora.py, each with the
             questions of benchmarks/corpora/NAME/questions.jsonl (colloquial, wording, cross-language,
             multi-document and near-topic); an answer is right when its quotes hold a gold `answers` string
             (every group of `answers_all`, where a row has one), a passage is the gold by the datasets' hit rule
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from benchmarks.common import DATASETS, PROJECT
from benchmarks.corpora import DEFAULT_CACHE, docs_dir, load_manifest
from rag.evaluation import Gold, is_hit
from rag.index.discovery import read_exclude_file
from rag.safety.markers import CANONICAL
from rag.types import Answer, Chunk
from rag.words.text import sentence_spans

CORPORA = load_manifest()
SET_NAMES = ("squad2", "squad2-zh", "lawref", "lawref-en", "lawref-en-more", "squad2-zh-orig",
             "lawref-en-orig", "lawref-en-more-orig", "handbook", "squad2-other", "handbook-other", "handbuch",
             "trilingual", "handbook-chat", *CORPORA)
HANDBOOK_QUESTIONS = PROJECT / "benchmarks" / "data" / "handbook_questions.jsonl"
HANDBOOK_OTHER = PROJECT / "benchmarks" / "data" / "handbook_questions_other.jsonl"
SQUAD2_OTHER = PROJECT / "benchmarks" / "data" / "squad2_questions_other.jsonl"
LAWREF_EN_MORE = PROJECT / "benchmarks" / "data" / "lawref_questions_en_more.jsonl"
HANDBUCH = PROJECT / "benchmarks" / "data" / "handbuch"
HANDBUCH_QUESTIONS = PROJECT / "benchmarks" / "data" / "handbuch_questions.jsonl"
_SPACE = re.compile(r"\s+")
# How people wrap a question in a chat message, by the question's language: question hb-n takes the n-th
# (in turn).
CHAT_FRAMINGS = {
    "en": ("hi! quick question - {q}", "Hey team, {q}", "{q} thanks!", "Hello, does anyone know: {q}",
           "Morning all. {q} Thanks in advance", "Sorry to bother you, {q}", "hi there, {q} cheers",
           "Good afternoon! {q}"),
    "zh": ("你好，请问{q}", "{q}谢谢！", "大家好，想问一下：{q}", "请问一下，{q}", "hi，{q}", "麻烦问下，{q}谢谢", "您好！{q}",
           "打扰一下，{q}"),
}


@dataclass(frozen=True)
class Part:
    """Questions answered from one index: `docs` indexed without `exclude`; `tag_dir` names the index."""

    tag_dir: Path
    docs: Path
    exclude: tuple[str, ...]
    rows: list[dict]
    also: tuple[Path, ...] = ()  # more folders indexed with `docs`


@dataclass(frozen=True)
class QuestionSet:
    name: str
    parts: list[Part]
    judge: Callable[[dict, Answer], bool]  # is this (not refused) answer to an answerable row right?
    gold_hit: Callable[[dict, Chunk], bool]  # is this retrieved passage the row's gold?


def load_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def squash(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


def quoted_text(answer: Answer) -> str:
    """The quotes of an extractive answer (`> …` lines), without markers."""
    quotes = [line[1:] for line in answer.text.splitlines() if line.startswith(">")]
    return re.sub(r"\[\d+\]", "", " ".join(quotes))


def first_quote(answer: Answer) -> Answer:
    """`answer` as far as its first quote: the excerpt a reader meets first (its `> …` lines up to the first
    citation marker) and the citation that marker names — what the judge reads for "first quote right"."""
    lines: list[str] = []
    for line in answer.text.splitlines():
        if line.startswith(">"):
            lines.append(line)
            if CANONICAL.search(line):
                break
    markers = {int(n) for n in CANONICAL.findall(lines[-1])} if lines else set()
    cited = [c for c in answer.citations if c.marker in markers]
    return replace(answer, text="\n".join(lines), citations=cited)


def excerpts(answer: Answer) -> list[tuple[str, set[int]]]:
    """The quotes of an extractive answer, each as its `> …` lines up to a citation marker, with the markers."""
    found: list[tuple[str, set[int]]] = []
    lines: list[str] = []
    for line in answer.text.splitlines():
        if line.startswith(">"):
            lines.append(line.lstrip("> "))
            if CANONICAL.search(line):
                markers = {int(n) for n in CANONICAL.findall(line)}
                found.append((CANONICAL.sub("", " ".join(lines)).strip(), markers))
                lines = []
    return found


_UNSPACED = re.compile(r"\s+")


def _sentences(text: str, shortest: int = 8) -> list[tuple[int, int]]:
    """The sentence spans of `text`, one shorter than `shortest` characters (a list item's "1.") joined to the
    next: too short to be found in a passage as itself."""
    spans: list[tuple[int, int]] = []
    carried = None
    for a, b in sentence_spans(text):
        a = a if carried is None else carried
        carried = a if len(_UNSPACED.sub("", text[a:b])) < shortest else None
        if carried is None:
            spans.append((a, b))
    return spans + ([(carried, len(text))] if carried is not None else [])


def paragraph_of(excerpt: str, chunk: Chunk) -> str:
    """The Markdown blocks of `chunk` — a paragraph, or a whole list, between blank lines — that hold the
    excerpt's sentences, in reading order; a sentence the passage does not hold as written (a quote is
    unwrapped, its links cut down) or that is a table's row (quoted with its header already) stays as quoted."""
    text = chunk.text
    dense = [k for k, ch in enumerate(text) if not ch.isspace()]
    squeezed = "".join(text[k] for k in dense)
    blocks: dict[tuple[str, int], str] = {}  # by where the block starts in the passage, or which sentence stayed
    for a, b in _sentences(excerpt):
        piece = _UNSPACED.sub("", excerpt[a:b])
        at = squeezed.find(piece)
        if at < 0:
            blocks[("kept", a)] = excerpt[a:b].strip()
            continue
        start = text.rfind("\n\n", 0, dense[at])
        end = text.find("\n\n", dense[at])
        block = text[0 if start < 0 else start + 2: len(text) if end < 0 else end].strip()
        table = all(line.lstrip().startswith("|") for line in block.splitlines())
        blocks.setdefault(("row", dense[at]) if table else ("block", start), excerpt[a:b].strip() if table else block)
    return " ".join(blocks.values())


def paragraphs(answer: Answer) -> list[str]:
    """Each quote of `answer` as the whole paragraph (or list) of its cited passage that holds it: what a
    paragraph-level citation would quote (BENCHMARKS.md)."""
    chunks = {c.marker: c.chunk for c in answer.citations}
    quoted = []
    for text, markers in excerpts(answer):
        cited = sorted(markers & chunks.keys())
        quoted.append(paragraph_of(text, chunks[cited[0]]) if cited else text)
    return quoted


def quoting(answer: Answer, quotes: list[str]) -> Answer:
    """`answer` with `quotes` as its quoted lines (each on one line), for a judge to read."""
    return replace(answer, text="\n".join("> " + q.replace("\n", " ") for q in quotes))


def paragraphs_quoted(answer: Answer) -> Answer:
    return quoting(answer, paragraphs(answer))


def squad_judge(row: dict, answer: Answer) -> bool:
    quoted = squash(quoted_text(answer))
    return any(squash(a) in quoted for a in row.get("answers", []) if a.strip())


def lawref_judge(row: dict, answer: Answer) -> bool:
    gold = [Gold(g["file"], g["text"]) for g in row["gold"]]
    return any(is_hit(c.chunk.file, c.chunk.text, g) for c in answer.citations for g in gold)


def handbook_judge(row: dict, answer: Answer) -> bool:
    """A gold string in the quotes, whitespace and case ignored (Chinese lines wrap anywhere)."""
    quoted = _SPACE.sub("", quoted_text(answer)).lower()
    return any(_SPACE.sub("", a).lower() in quoted for a in row.get("answers", []) if a.strip())


def corpus_judge(row: dict, answer: Answer) -> bool:
    """handbook_judge, and for a row that asks for more than one thing (`answers_all`: a list of groups of
    acceptable strings), a string of every group in the quotes."""
    groups = row.get("answers_all") or [row.get("answers", [])]
    return all(handbook_judge({"answers": group}, answer) for group in groups)


def gold_passage(row: dict, chunk: Chunk) -> bool:
    return any(is_hit(chunk.file, chunk.text, Gold(g["file"], g["text"])) for g in row.get("gold", []))


def gold_file(row: dict, chunk: Chunk) -> bool:
    return chunk.file == row.get("gold_file")


def gold_file_in_folder(row: dict, chunk: Chunk) -> bool:
    """With more than one folder indexed, a file is named under its folder: "handbook/onboarding.md"."""
    return Path(chunk.file).name == row.get("gold_file")


def _limited(rows: list[dict], limit: int) -> list[dict]:
    return rows[:limit] if limit else rows


def _written(rows: list[dict], limit: int, unanswerable: bool) -> list[dict]:
    """Of the questions written for a handbook: the answerable ones, then (with `unanswerable`) the others."""
    chosen = _limited([r for r in rows if r["answerable"]], limit)
    if unanswerable:
        chosen += _limited([r for r in rows if not r["answerable"]], limit)
    return chosen


def _answerable(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r.get("answerable", True) and r.get("gold")]


def _originals(folder: Path, translated: str) -> list[dict]:
    """The rows of `folder`'s questions.jsonl that the rows of `translated` were translated from (their id
    with the language suffix removed, "lecoqa:664:en" -> "lecoqa:664"; squad2-zh keeps the id)."""
    rows = {r["id"]: r for r in load_rows(folder / "questions.jsonl")}
    ids = [r["id"] for r in load_rows(folder / translated)]
    return [rows[i] if i in rows else rows[i.rsplit(":", 1)[0]] for i in ids]


def _corpus_set(name: str, limit: int, unanswerable: bool) -> QuestionSet:
    docs = docs_dir(name, DEFAULT_CACHE)
    if not docs.is_dir():
        raise ValueError(f"corpus {name} is not at {docs}: run benchmarks/corpora.py --corpora {name} first")
    rows = _written(load_rows(PROJECT / "benchmarks" / "corpora" / name / "questions.jsonl"), limit, unanswerable)
    return QuestionSet(name, [Part(docs, docs, (), rows)], corpus_judge, gold_passage)


def load_set(name: str, limit: int = 0, unanswerable: bool = True) -> QuestionSet:
    """`limit`: at most that many answerable (and that many unanswerable) questions."""
    if name in CORPORA:
        return _corpus_set(name, limit, unanswerable)
    if name in ("squad2-zh-orig", "lawref-en-orig"):
        folder = DATASETS / name.split("-")[0]
        translated = "questions-zh.jsonl" if name == "squad2-zh-orig" else "questions-en.jsonl"
        rows = _limited(_originals(folder, translated), limit)
        judge = squad_judge if name == "squad2-zh-orig" else lawref_judge
        return QuestionSet(name, [Part(folder, folder / "docs", (), rows)], judge, gold_passage)
    if name in ("squad2", "squad2-zh"):
        squad = DATASETS / "squad2"
        rows = load_rows(squad / ("questions.jsonl" if name == "squad2" else "questions-zh.jsonl"))
        chosen = _limited(_answerable(rows), limit)
        if unanswerable:
            chosen += _limited([r for r in rows if not r.get("answerable", True)], limit)
        return QuestionSet(name, [Part(squad, squad / "docs", (), chosen)], squad_judge, gold_passage)
    if name in ("lawref", "lawref-en"):
        lawref = DATASETS / "lawref"
        rows = load_rows(lawref / ("questions.jsonl" if name == "lawref" else "questions-en.jsonl"))
        parts = [Part(lawref, lawref / "docs", (), _limited(_answerable(rows), limit))]
        if name == "lawref" and unanswerable:
            exclude = tuple(read_exclude_file(lawref / "refusal-exclude.txt"))
            parts.append(Part(lawref, lawref / "docs", exclude,
                              _limited(load_rows(lawref / "refusal.jsonl"), limit)))
        return QuestionSet(name, parts, lawref_judge, gold_passage)
    if name in ("lawref-en-more", "lawref-en-more-orig"):
        lawref = DATASETS / "lawref"
        gold = {r["id"]: r for r in load_rows(lawref / "questions.jsonl")}
        written = load_rows(LAWREF_EN_MORE)
        rows = [gold[r["id"].rsplit(":", 1)[0]] for r in written]
        if name == "lawref-en-more":
            rows = [row | {"id": r["id"], "question": r["question"], "lang": r["lang"]}
                    for row, r in zip(rows, written)]
        return QuestionSet(name, [Part(lawref, lawref / "docs", (), _limited(rows, limit))], lawref_judge,
                           gold_passage)
    if name == "squad2-other":
        squad = DATASETS / "squad2"
        gold = {r["id"]: r for r in load_rows(squad / "questions.jsonl")}
        # The gold of the English row each was written from; the language is the row's kind (by_kind figures).
        rows = [gold[r["id"].rsplit(":", 1)[0]] | {"id": r["id"], "question": r["question"], "lang": r["lang"],
                                                   "kind": r["lang"]} for r in load_rows(SQUAD2_OTHER)]
        return QuestionSet(name, [Part(squad, squad / "docs", (), _limited(rows, limit))], squad_judge,
                           gold_passage)
    if name == "trilingual":
        handbook = PROJECT / "examples" / "handbook"
        rows = load_rows(HANDBOOK_QUESTIONS) + [r for r in load_rows(HANDBUCH_QUESTIONS) if r["lang"] == "de"]
        chosen = _written(rows, limit, unanswerable)
        # The index is named by its tag folder's name: one of its own, not the handbook's.
        part = Part(Path("trilingual"), handbook, (), chosen, (HANDBUCH,))
        return QuestionSet(name, [part], handbook_judge, gold_file_in_folder)
    if name == "handbook-chat":
        rows = _written(load_rows(HANDBOOK_QUESTIONS), limit, unanswerable)
        framed = []
        for row in rows:  # by the row's number: a row added leaves the others' framings as they are
            framings = CHAT_FRAMINGS[row["lang"]]
            n = int(row["id"].rsplit("-", 1)[1]) - 1
            framed.append(row | {"question": framings[n % len(framings)].format(q=row["question"])})
        docs = PROJECT / "examples" / "handbook"
        return QuestionSet(name, [Part(docs, docs, (), framed)], handbook_judge, gold_file)
    if name in ("handbook", "handbook-other", "handbuch"):
        rows = load_rows({"handbook": HANDBOOK_QUESTIONS, "handbook-other": HANDBOOK_OTHER,
                          "handbuch": HANDBUCH_QUESTIONS}[name])
        if name == "handbook-other":
            rows = [r | {"kind": r["lang"]} for r in rows]
        chosen = _written(rows, limit, unanswerable)
        docs = HANDBUCH if name == "handbuch" else PROJECT / "examples" / "handbook"
        return QuestionSet(name, [Part(docs, docs, (), chosen)], handbook_judge, gold_file)
    raise ValueError(f"unknown question set {name!r}: one of {', '.join(SET_NAMES)}")


def is_answerable(row: dict) -> bool:
    return bool(row.get("answerable", True))
