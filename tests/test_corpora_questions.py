"""The held-out corpora of the broad evaluation (benchmarks/corpora.py, benchmarks/corpora/): each corpus's
questions hold the kinds they claim, every answer string is in the row's gold passage, a corpus is
materialised at its pinned commit (from a snapshot, else fetched) with its folder's Markdown only, and a
multi-document question is answered only when both of its parts are."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from benchmarks import corpora
from benchmarks.answer_quality import cites_gold
from benchmarks.corpora import Corpus, load_manifest, materialise, question_problems
from benchmarks.question_sets import corpus_judge, paragraphs_quoted
from rag.types import Answer, Chunk, Citation

KINDS = {"colloquial": 10, "wording": 5, "cross-language": 8, "multi-document": 4, "near-topic": 8}


def questions(name: str) -> list[dict]:
    path = corpora.QUESTIONS / name / "questions.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def squashed(text: str) -> str:
    return "".join(text.split()).lower()


@pytest.mark.parametrize("name", sorted(load_manifest()))
def test_each_corpus_asks_every_kind_in_both_languages(name):
    rows = questions(name)
    corpus = load_manifest()[name]
    counts = Counter(r["kind"] for r in rows)
    assert len(rows) >= 40 and set(counts) == set(KINDS)
    assert all(counts[kind] >= least for kind, least in KINDS.items()), counts
    for row in rows:
        assert row["id"].startswith(rows[0]["id"].rsplit("-", 1)[0] + "-")
        assert row["answerable"] == (row["kind"] != "near-topic")
        if row["kind"] == "cross-language":
            assert row["lang"] != corpus.lang, row["id"]
        elif row["kind"] in ("colloquial", "wording", "multi-document"):
            assert row["lang"] == corpus.lang, row["id"]
    assert len({r["id"] for r in rows}) == len(rows)


@pytest.mark.parametrize("name", sorted(load_manifest()))
def test_every_gold_passage_holds_an_answer_and_near_topic_rows_have_none(name):
    for row in questions(name):
        if not row["answerable"]:
            assert row["gold"] == [] and row["answers"] == [] and row["checked_absent"], row["id"]
            continue
        gold = squashed(" ".join(g["text"] for g in row["gold"]))
        assert row["gold"] and all(g["file"].endswith(".md") for g in row["gold"]), row["id"]
        accepted = row["answers"] + [a for group in row.get("answers_all", []) for a in group]
        for passage in row["gold"]:  # a passage quoted alone can be judged right
            assert any(squashed(a) in squashed(passage["text"]) for a in accepted), (row["id"], passage["file"])
        for group in row.get("answers_all", []):
            assert any(squashed(a) in gold for a in group), (row["id"], group)
        if row["kind"] == "multi-document":
            assert len({g["file"] for g in row["gold"]}) >= 2 and len(row["answers_all"]) >= 2, row["id"]


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def upstream(tmp_path) -> tuple[Path, str]:
    """A repository with a docs/ folder; returns its bare copy and the first commit (a later one edits it)."""
    work = tmp_path / "work"
    (work / "docs" / "team").mkdir(parents=True)
    (work / "docs" / "leave.md").write_text("# Leave\n\n15 days a year.\n", encoding="utf-8")
    (work / "docs" / "team" / "travel.md").write_text("# Travel\n\nBook in Concur.\n", encoding="utf-8")
    (work / "docs" / "logo.png").write_bytes(b"\x89PNG")
    (work / "README.md").write_text("# Not in the corpus\n", encoding="utf-8")
    git("init", "-q", "-b", "main", cwd=work)
    git("-c", "user.name=t", "-c", "user.email=t@t", "add", ".", cwd=work)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first", cwd=work)
    first = git("rev-parse", "HEAD", cwd=work)
    (work / "docs" / "leave.md").write_text("# Leave\n\n20 days a year.\n", encoding="utf-8")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "second", cwd=work)
    bare = tmp_path / "upstream" / "acme" / "handbook.git"
    git("clone", "-q", "--bare", str(work), str(bare), cwd=tmp_path)
    return bare, first


def corpus_at(commit: str) -> Corpus:
    return Corpus(name="acme", repo="acme/handbook", commit=commit, folder="docs", lang="en", licence="CC0",
                  what="a test handbook")


def test_a_snapshot_gives_the_folders_markdown_at_the_pinned_commit(upstream, tmp_path):
    bare, first = upstream
    mirrors = tmp_path / "mirrors"
    (mirrors / "acme+handbook").mkdir(parents=True)
    (mirrors / "acme+handbook" / "repo").symlink_to(bare)
    cache = tmp_path / "cache"
    done = materialise(corpus_at(first), cache, mirrors)
    docs = cache / "acme"
    assert sorted(p.relative_to(docs).as_posix() for p in docs.rglob("*") if p.is_file()) == [
        "leave.md", "team/travel.md"]
    assert "15 days" in (docs / "leave.md").read_text(encoding="utf-8")  # the pinned commit, not the newest
    assert done["files"] == 2 and done["source"].startswith("snapshot")
    assert materialise(corpus_at(first), cache, mirrors)["source"] == "already there"


def test_a_snapshot_missing_an_image_still_gives_the_markdown(upstream, tmp_path):
    bare, first = upstream
    image = git(f"--git-dir={bare}", "rev-parse", f"{first}:docs/logo.png", cwd=tmp_path)
    (bare / "objects" / image[:2] / image[2:]).unlink()  # a snapshot leaves out its largest files
    mirrors = tmp_path / "mirrors"
    (mirrors / "acme+handbook").mkdir(parents=True)
    (mirrors / "acme+handbook" / "repo").symlink_to(bare)
    done = materialise(corpus_at(first), tmp_path / "cache", mirrors)
    assert done["files"] == 2 and "15 days" in (tmp_path / "cache" / "acme" / "leave.md").read_text()


def test_without_a_snapshot_the_pinned_commit_is_fetched(upstream, tmp_path, monkeypatch):
    bare, first = upstream
    monkeypatch.setattr(corpora, "GITHUB", f"file://{bare.parent.parent}/")
    done = materialise(corpus_at(first), tmp_path / "cache", tmp_path / "no-mirrors")
    assert done["source"] == "git fetch from GitHub"
    assert "15 days" in (tmp_path / "cache" / "acme" / "leave.md").read_text(encoding="utf-8")


def test_an_unreachable_repository_is_one_line_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(corpora, "GITHUB", f"file://{tmp_path}/nowhere/")
    with pytest.raises(RuntimeError) as raised:
        materialise(corpus_at("0" * 40), tmp_path / "cache", tmp_path / "no-mirrors")
    assert str(raised.value).startswith("git fetch of file://") and "\n" not in str(raised.value)
    assert not (tmp_path / "cache" / "acme").exists()


def test_question_problems_names_a_passage_not_in_the_text_and_a_term_that_is(upstream, tmp_path):
    bare, first = upstream
    mirrors = tmp_path / "mirrors"
    (mirrors / "acme+handbook").mkdir(parents=True)
    (mirrors / "acme+handbook" / "repo").symlink_to(bare)
    materialise(corpus_at(first), tmp_path / "cache", mirrors)
    rows = [
        {"id": "acme-01", "kind": "wording", "answerable": True, "answers": ["15 days"],
         "gold": [{"file": "leave.md", "text": "15 days a year."}]},
        {"id": "acme-02", "kind": "wording", "answerable": True, "answers": ["20 days"],
         "gold": [{"file": "leave.md", "text": "20 days a year."}]},
        {"id": "acme-03", "kind": "near-topic", "answerable": False, "answers": [], "gold": [],
         "checked_absent": ["Concur", "sabbatical"]},
    ]
    (tmp_path / "q" / "acme").mkdir(parents=True)
    (tmp_path / "q" / "acme" / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert question_problems(corpus_at(first), tmp_path / "cache", tmp_path / "q") == [
        "acme-02: gold passage not in leave.md", "acme-03: 'Concur' is in team/travel.md"]


def chunk(file: str, text: str) -> Chunk:
    return Chunk(id=file, file=file, title="", heading_path=(), text=text, start=0, end=len(text), page=None,
                 page_end=None, doc_version="", doc_date="")


def quoting(*cited: tuple[str, str]) -> Answer:
    text = "\n".join(f"> {quote} [{n}]" for n, (_, quote) in enumerate(cited, 1))
    return Answer(question="q", text=text, refused=False, mode="extractive",
                  citations=[Citation(n, chunk(file, quote)) for n, (file, quote) in enumerate(cited, 1)])


MULTI = {"kind": "multi-document", "answers": ["15 days", "following Monday"],
         "answers_all": [["15 days", "3 weeks"], ["following Monday"]],
         "gold": [{"file": "vacation.md", "text": "…"}, {"file": "holidays.md", "text": "…"}]}


def test_a_multi_document_answer_is_right_and_cites_the_gold_only_with_both_parts():
    one_side = quoting(("vacation.md", "Clef offers 3 weeks (15 days) of paid vacation."))
    both = quoting(("vacation.md", "Clef offers 3 weeks (15 days) of paid vacation."),
                   ("holidays.md", "If it falls on a Sunday, it will be observed on the following Monday."))
    assert not corpus_judge(MULTI, one_side) and not cites_gold(MULTI, one_side)
    assert corpus_judge({**MULTI, "answers_all": []}, one_side)  # one part held: "partly"
    assert corpus_judge(MULTI, both) and cites_gold(MULTI, both)


def test_a_single_document_answer_cites_the_gold_when_it_names_any_gold_file():
    row = {"kind": "colloquial", "answers": ["12 weeks"],
           "gold": [{"file": "parent-leave.md", "text": "…"}, {"file": "offer-letter.md", "text": "…"}]}
    assert cites_gold(row, quoting(("offer-letter.md", "12 weeks paid new parent leave")))
    assert not cites_gold(row, quoting(("README.md", "* New Parent Leave")))


LEARNING = ("Every employee has a learning budget.\n\n"
            "The budget covers:\n1. courses,\n2. conferences up to\n  $4,000 a year,\n3. books.\n\n"
            "It resets every January.")


def test_a_paragraph_level_citation_quotes_the_whole_list_or_paragraph_holding_the_quote():
    cited = Answer(question="q", text="> 1. courses, [1]\n> Something said otherwise. [2]", refused=False,
                   mode="extractive", citations=[Citation(1, chunk("learning.md", LEARNING)),
                                                 Citation(2, chunk("other.md", "Nothing of it."))])
    row = {"kind": "colloquial", "answers": ["$4,000 a year"], "gold": [{"file": "learning.md", "text": "…"}]}

    widened = paragraphs_quoted(cited)

    assert not corpus_judge(row, cited) and corpus_judge(row, widened)
    assert widened.text.splitlines() == ["> The budget covers: 1. courses, 2. conferences up to   $4,000 a year, 3. books.",
                                         "> Something said otherwise."]
