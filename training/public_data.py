"""Public labelled question-answering data the learned parts are trained on, written out as knowledge bases.

Each source is read from a snapshot that the search tool's `fetch` brought to MIRRORS/OWNER+NAME/repo (a bare
git directory) and written to CACHE/NAME/ as Markdown, one file per article (`# title`, then its paragraphs),
with its questions in CACHE/NAME.jsonl: `{"id", "question", "lang", "answers": {lang: [...]}, "article"}`.

* xquad — XQuAD (google-deepmind/xquad, CC BY-SA 4.0): SQuAD v1.1 dev paragraphs and questions translated
  by professionals; English and Chinese side by side in one knowledge base, each question asked in both
  languages (an English question meets the Chinese paragraph too, and each side is labelled by its own
  language's answer). Only the 13 of its 48 articles that are NOT in SQuAD 2.0's dev set: the squad2 set of
  ../shared/datasets, and the hidden set beside it, are drawn from SQuAD 2.0's dev articles, and no question
  of an evaluation set is trained on.
* cmrc — CMRC 2018 (ymcui/cmrc2018, CC BY-SA 4.0): Chinese Wikipedia paragraphs with questions written
  by annotators; the trial set and the dev set (its train set is missing from the snapshot).
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

# XQuAD's articles that SQuAD 2.0's dev set does not hold (the other 35 are left out).
XQUAD_ARTICLES = (
    "Super_Bowl_50", "Nikola_Tesla", "Teacher", "Martin_Luther", "Apollo_program", "Newcastle_upon_Tyne",
    "Victoria_and_Albert_Museum", "American_Broadcasting_Company", "Genghis_Khan", "Doctor_Who", "Kenya",
    "Chloroplast", "United_Methodist_Church",
)
XQUAD_LANGUAGES = ("en", "zh")
CMRC_FILES = ("squad-style-data/cmrc2018_trial.json", "squad-style-data/cmrc2018_dev.json")
# Of its 1,104 paragraphs (4,221 questions): about 2,200 questions, indexed in minutes on two cores.
CMRC_PARAGRAPHS = 560


@dataclass(frozen=True)
class Dataset:
    name: str
    docs: Path
    questions: Path

    def rows(self) -> list[dict]:
        return [json.loads(line) for line in self.questions.read_text(encoding="utf-8").splitlines()]


def _blob(mirrors: Path, repo: str, path: str) -> dict:
    git = mirrors / repo.replace("/", "+") / "repo"
    if not git.exists():
        raise SystemExit(f"no snapshot of {repo} in {mirrors}: fetch github:{repo} with the search tool")
    shown = subprocess.run(["git", "-C", str(git), "show", f"HEAD:{path}"], capture_output=True, check=True)
    return json.loads(shown.stdout)


def _file_name(title: str) -> str:
    return re.sub(r"[^\w.-]+", "_", title).strip("_")[:80] or "untitled"


def _write(name: str, cache: Path, articles: dict[str, str], rows: list[dict]) -> Dataset:
    docs = cache / name
    docs.mkdir(parents=True, exist_ok=True)
    for file, text in articles.items():
        (docs / file).write_text(text, encoding="utf-8")
    questions = cache / f"{name}.jsonl"
    questions.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return Dataset(name, docs, questions)


def _title(title: str, first: str, lang: str) -> str:
    """The article's title in its own language: XQuAD translates the paragraphs, not the titles, so a
    translated article is titled by its first clause (an English title would hand its words to an English
    question)."""
    if lang == "en":
        return title.replace("_", " ")
    return re.split(r"[，。；：,.;:（(]", first, maxsplit=1)[0][:30]


def xquad(mirrors: Path, cache: Path, asked: tuple[str, ...] = XQUAD_LANGUAGES,
          written: tuple[str, ...] = XQUAD_LANGUAGES, name: str = "xquad") -> Dataset:
    """The questions in the languages `asked`, of the articles in the languages `written`."""
    articles: dict[str, str] = {}
    answers: dict[str, dict[str, list[str]]] = {}
    questions: dict[tuple[str, str], str] = {}
    article_of: dict[str, str] = {}
    for lang in XQUAD_LANGUAGES:
        for article in _blob(mirrors, "google-deepmind/xquad", f"xquad.{lang}.json")["data"]:
            if article["title"] not in XQUAD_ARTICLES:
                continue
            paragraphs = [p["context"].strip() for p in article["paragraphs"]]
            if lang in written:
                file = f"{XQUAD_ARTICLES.index(article['title']):02d}.{lang}.md"
                articles[file] = f"# {_title(article['title'], paragraphs[0], lang)}\n\n" + "\n\n".join(paragraphs) + "\n"
            for p in article["paragraphs"]:
                for qa in p["qas"]:
                    answers.setdefault(qa["id"], {})[lang] = sorted({a["text"] for a in qa["answers"]})
                    questions[(qa["id"], lang)] = qa["question"]
                    article_of[qa["id"]] = article["title"]
    rows = [{"id": f"{qid}:{lang}", "question": question, "lang": lang, "answers": answers[qid],
             "article": article_of[qid]} for (qid, lang), question in sorted(questions.items())
            if lang in asked]
    return _write(name, cache, articles, rows)


def cmrc(mirrors: Path, cache: Path, paragraphs: int = CMRC_PARAGRAPHS) -> Dataset:
    """The first `paragraphs` of the trial set, then of the dev set."""
    articles: dict[str, str] = {}
    rows = []
    for path in CMRC_FILES:
        for article in _blob(mirrors, "ymcui/cmrc2018", path)["data"]:
            for p in article["paragraphs"]:
                if len(articles) >= paragraphs:
                    break
                key = p.get("id") or article.get("id") or str(len(articles))
                title = article.get("title") or key
                articles[f"{_file_name(key)}.md"] = f"# {title}\n\n{p['context'].strip()}\n"
                for qa in p["qas"]:
                    if not qa["question"].strip():
                        continue  # (a few of CMRC's are empty)
                    rows.append({"id": qa["id"], "question": qa["question"], "lang": "zh",
                                 "answers": {"zh": sorted({a["text"] for a in qa["answers"]})}, "article": key})
    return _write("cmrc", cache, articles, rows)


BUILDERS = {
    "xquad": xquad,
    # One language's questions of the other language's articles: the knowledge base in one language, the asker
    # writing in the other
    "xquad-en-zh": lambda mirrors, cache: xquad(mirrors, cache, ("en",), ("zh",), "xquad-en-zh"),
    "xquad-zh-en": lambda mirrors, cache: xquad(mirrors, cache, ("zh",), ("en",), "xquad-zh-en"),
    "cmrc": cmrc,
}
