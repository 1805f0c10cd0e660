"""`ai-employee feedback …` as admins use it: what votes do, undo, and the votes as an evaluation set."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rag.knowledge_base import KnowledgeBase, make_pipeline
from rag.config import Settings
from rag.feedback import ANSWER, CitedChunk, citation_target
from tests.conftest import ENTITLEMENT, ENTITLEMENT_ZH, HANDBOOK, LEAVE, cli_env
from tests.fakes.openai_server import FakeOpenAIServer, quoting


def run(data_dir: Path, feedback_db: Path, *args: str, env: dict[str, str] | None = None,
        ) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "ai_employee.cli", *args],
                            env=cli_env(data_dir) | {"AIE_FEEDBACK_DB": str(feedback_db)} | (env or {}),
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, f"{args}\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def handbook(shared_data_dir):
    """The sample handbook, of English and Chinese documents, indexed."""
    KnowledgeBase.default(Settings(data_dir=shared_data_dir, _env_file=None)).refresh([HANDBOOK])
    return shared_data_dir


@pytest.fixture(scope="module")
def voted(handbook, tmp_path_factory):
    """Votes on the handbook's answers as people would leave them in the bot."""
    feedback_db = tmp_path_factory.mktemp("feedback") / "feedback.sqlite3"
    kb = KnowledgeBase.default(Settings(data_dir=handbook, feedback_db=feedback_db, _env_file=None))

    def answer(question: str, chunks) -> str:
        cited = [CitedChunk(c.id, c.file, c.title, c.text) for c in chunks]
        return kb.feedback.record_answer(question, "…", cited, "v", "C1", "U0", kb.embedder.embed_query(question))

    password = "How long must a password be?"
    good = kb.retriever.search(password, top_k=1)[0].chunk
    kb.feedback.vote(answer(password, [good]), "U1", ANSWER, 1, "C1")  # 👍: its citation is gold
    laptop = "What do I do if I lose my laptop?"
    top = kb.retriever.search(laptop, top_k=1)[0].chunk
    flagged = answer(laptop, [top])
    for user in ("U2", "U3"):  # two people: this source is wrong
        kb.feedback.vote(flagged, user, citation_target(1), -1, "C1")
    meals = "出差吃饭能报多少?"
    wrong = kb.retriever.search(meals, top_k=3)[2].chunk
    down = answer(meals, [wrong])
    kb.feedback.vote(down, "U4", ANSWER, -1, "C1")
    kb.feedback.set_reason(down, "U4", "wrong source", "that is the hotel rule")
    kb.feedback.close()
    return handbook, feedback_db, good, top, wrong


def test_adjustments_list_what_the_votes_do_and_undo_ends_it(voted):
    data, db, _, top, _ = voted
    listed = json.loads(run(data, db, "feedback", "adjustments", "--json").stdout)
    assert [(a["chunk_id"], sorted(a["flaggers"]), a["status"]) for a in listed] == [(top.id, ["U2", "U3"], "demoted")]
    summary = json.loads(run(data, db, "feedback", "summary", "--json").stdout)
    assert summary["answers"][0]["reasons"] == {"wrong source": 1}
    assert summary["answers"][0]["comments"] == ["that is the hotel rule"]


def test_the_votes_become_an_evaluation_set_that_eval_reads(voted, tmp_path):
    data, db, good, top, wrong = voted
    out = tmp_path / "from-users"
    written = json.loads(run(data, db, "feedback", "export", "--eval", str(out), "--json").stdout)
    assert (written["questions"], written["with_gold"], written["with_negatives"]) == (3, 1, 2)
    assert (out / "docs").resolve() == HANDBOOK.resolve()
    rows = {r["question"]: r for r in map(json.loads, (out / "questions.jsonl").read_text(encoding="utf-8").splitlines())}
    assert rows["How long must a password be?"]["gold"] == [{"file": good.file, "text": good.text}]
    assert rows["What do I do if I lose my laptop?"]["negatives"] == [{"file": top.file, "text": top.text}]
    assert rows["出差吃饭能报多少?"]["negatives"] == [{"file": wrong.file, "text": wrong.text}]
    assert rows["出差吃饭能报多少?"]["lang"] == "zh" and rows["出差吃饭能报多少?"]["answerable"]

    plain = json.loads(run(data, db, "eval", str(out), "--json").stdout)
    assert plain["questions"] == 3 and plain["answerable"] == 1 and plain["recall@5"] == 1.0
    assert plain["with_negatives"] == 2 and plain["negative@5"] == 1.0, "each rejected passage is still retrieved"
    ranked = json.loads(run(data, db, "eval", str(out), "--feedback", "--json").stdout)
    assert ranked["recall@5"] == 1.0
    assert ranked["negative@5"] <= plain["negative@5"]
    results = [json.loads(line) for line in Path(ranked["results"]).read_text(encoding="utf-8").splitlines()]
    laptop = next(r for r in results if r["id"] == rows["What do I do if I lose my laptop?"]["id"])
    assert laptop["results"][0]["text"] != top.text, "the passage two people flagged no longer comes first"



def ask_in_channel(data: Path, db: Path, *options: str, env: dict[str, str] | None = None) -> str:
    """`ask LEAVE --channel C0GENERAL` as an operator runs it: what it prints."""
    return run(data, db, "ask", LEAVE, "--channel", "C0GENERAL", *options, env=env).stdout


def location(citation: dict) -> str:
    """Where a citation of `ask --json` comes from, as its footnote says it."""
    return citation["footnote"].split(" ", 1)[1]


def flagged_by_two(data: Path, db: Path, shown: dict, marker: int) -> dict:
    """`shown` (the JSON of `ask --json`) recorded as the bot records an answer it posted, and its footnote
    [marker] flagged "this source is wrong" by two people; that footnote's citation."""
    kb = KnowledgeBase.default(Settings(data_dir=data, feedback_db=db, _env_file=None))
    cited = [CitedChunk(c["chunk"]["id"], c["chunk"]["file"], location(c), c["chunk"]["text"],
                        c["chunk"]["title"], c["chunk"]["url"]) for c in shown["citations"]]
    vector = make_pipeline(kb).finder.query_vector(shown["question"], shown["index_version"])
    answer_id = kb.feedback.record_answer(shown["question"], shown["text"], cited, shown["index_version"],
                                          "C0GENERAL", "U0ASKER", vector)
    for user in ("U0PLAIN01", "U0PLAIN02"):
        kb.feedback.vote(answer_id, user, citation_target(marker), -1, "C0GENERAL")
    kb.feedback.close()
    return shown["citations"][marker - 1]


def test_a_chinese_passage_two_people_flagged_is_not_quoted_again(handbook, tmp_path):
    """Footnote [2] quotes the Chinese leave rules under the English policy's 26 days. Flagged by two people
    and listed as demoted, it was quoted again: the other language's best passages, joined by meaning alone,
    brought it back."""
    db = tmp_path / "feedback.sqlite3"
    shown = json.loads(ask_in_channel(handbook, db, "--json"))
    flagged = flagged_by_two(handbook, db, shown, 2)
    assert flagged["chunk"]["file"] == "年假与请假制度.md" and ENTITLEMENT_ZH in shown["text"]
    listed = json.loads(run(handbook, db, "feedback", "adjustments", "--json").stdout)
    assert [(a["chunk_id"], a["status"]) for a in listed] == [(flagged["chunk"]["id"], "demoted")]

    again = ask_in_channel(handbook, db)
    assert ENTITLEMENT in again, "the English policy still answers"
    assert ENTITLEMENT_ZH not in again and location(flagged) not in again


def test_a_passage_two_people_flagged_is_not_given_to_the_answer_model_again(handbook, tmp_path):
    db = tmp_path / "feedback.sqlite3"
    with FakeOpenAIServer() as model:
        model.script.stream_fn = quoting(ENTITLEMENT, ENTITLEMENT_ZH)
        env = {"AIE_ANSWER_BASE_URL": model.base_url, "AIE_ANSWER_MODEL": "m"}
        shown = json.loads(ask_in_channel(handbook, db, "--json", env=env))
        flagged = flagged_by_two(handbook, db, shown, 2)
        again = ask_in_channel(handbook, db, env=env)
        first, second = (str(r["body"]["messages"]) for r in model.requests_to("/chat/completions"))
    assert flagged["chunk"]["file"] == "年假与请假制度.md" and ENTITLEMENT_ZH in first
    assert ENTITLEMENT_ZH not in second, "the flagged passage is not among the sources the model reads"
    assert ENTITLEMENT in again and location(flagged) not in again
