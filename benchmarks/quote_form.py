"""How an extractive answer's quotes read, beside whether they hold the gold: whether one quotes markup or
code, and whether a quote is introduced as from a document in another language than its own.

    .venv/bin/python benchmarks/quote_form.py --docs DOCS_DIR --lang zh DATA_DIR/NAME-SET.jsonl

* **Markup or code quoted**: a quoted line (or a document title in an intro) holds an HTML tag, an HTML
  entity, a template directive (`{% … %}`, `{{ … }}`) or a code fence, or its words lie in a fenced code block
  or an HTML block of a document the answer cites (the cited files read as written, by markdown-it).
* **Language mislabelled**: an intro names the document's language ("摘自英文文档《…》", "From the Chinese
  document …") and that is not the language of the corpus, whose documents are all in one language.

answer_quality.py adds both to every row of a held-out corpus and counts them per set; this script counts them
again in a saved answers file (an earlier run's), so runs made before the counts existed compare.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from functools import lru_cache
from pathlib import Path

from markdown_it import MarkdownIt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.judging.extractive import FROM_DOCUMENT, FROM_OTHER_DOCUMENT, FROM_OWN_DOCUMENT  # noqa: E402

_TAG = re.compile(r"</?[A-Za-z][\w-]*(?:\s+[\w:-]+(?:=(?:\"[^\"]*\"|'[^']*'|[^\s>]+))?)*\s*/?>")
_ATTRIBUTES = re.compile(r"(?:\b[\w-]+=\"[^\"]*\"\s*){2,}")  # width="100%" height="600": a tag cut open
_ENTITY = re.compile(r"&(?:#\d+|#x[0-9A-Fa-f]+|[A-Za-z]+);")
_TEMPLATE = re.compile(r"\{%.*?%\}|\{\{.*?\}\}")
_FENCE = re.compile(r"```|~~~")
_MARKER = re.compile(r"\[\d+\]")
_LINK_HOST = re.compile(r" \(`[^`]+`\)")  # a link's text shown with its host (rag.safety.links.unlink)
MIN_CODE = 12  # characters (without spaces) of a quoted line that must lie in a code block to count
# Each intro, with the language it names ("" for one that names none)
_INTROS = [(re.compile(re.escape(template).replace(re.escape("{title}"), "(?P<title>.*)")), written)
           for (_frame, written), template in FROM_DOCUMENT.items()] + [
           (re.compile(re.escape(template).replace(re.escape("{title}"), "(?P<title>.*)")), "")
           for template in (*FROM_OWN_DOCUMENT.values(), *FROM_OTHER_DOCUMENT.values())]


def quote_lines(answer: str) -> list[str]:
    """The quoted lines of an answer, without `> ` and citation markers."""
    return [_MARKER.sub("", line[1:]).strip() for line in answer.splitlines() if line.startswith(">")]


def intros(answer: str) -> list[tuple[str, str]]:
    """(the language an intro names, "" when it names none; the title it gives) for each intro line."""
    found = []
    for line in answer.splitlines():
        for pattern, written in _INTROS:
            match = pattern.fullmatch(line.strip())
            if match:
                found.append((written, match.group("title")))
                break
    return found


def mislabelled(answer: str, lang: str) -> bool:
    """Whether an intro names another language than `lang`, the language of every document."""
    return any(written and written != lang for written, _ in intros(answer))


def has_markup(text: str) -> bool:
    return bool(_TAG.search(text) or _ATTRIBUTES.search(text) or _ENTITY.search(text) or _TEMPLATE.search(text)
                or _FENCE.search(text))


def quotes_markup(answer: str, cited: list[str], docs: Path | None) -> bool:
    """Whether a quote (or an intro's title) holds markup, or a quoted line is code of a cited document."""
    lines = quote_lines(answer)
    if any(has_markup(line) for line in lines) or any(has_markup(title) for _, title in intros(answer)):
        return True
    if docs is None:
        return False
    regions = "\n".join(_code_regions(docs / file) for file in cited)
    for line in lines:
        words = _squashed(_LINK_HOST.sub("", line))
        if len(words) >= MIN_CODE and words in regions:
            return True
    return False


@lru_cache(maxsize=256)
def _code_regions(path: Path) -> str:
    """The fenced code blocks and HTML blocks of a Markdown file, without whitespace, one a line."""
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    lines = source.splitlines()
    tokens = MarkdownIt("commonmark").enable("table").parse(source)
    return "\n".join(_squashed("\n".join(lines[t.map[0]:t.map[1]]))
                     for t in tokens if t.type in ("fence", "code_block", "html_block") and t.map)


def _squashed(text: str) -> str:
    return "".join(text.split())


def counts(rows: list[dict], docs: Path | None, lang: str | None) -> dict[str, int]:
    """Of the answers given (not refused): how many quote markup or code, how many mislabel a language."""
    given = [r for r in rows if not r["refused"]]
    out = {"answers": len(given),
           "quotes_markup": sum(quotes_markup(r["answer"], r.get("cited", []), docs) for r in given)}
    if lang:
        out["mislabelled_language"] = sum(mislabelled(r["answer"], lang) for r in given)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("answers", type=Path, nargs="+")
    parser.add_argument("--docs", type=Path, help="the corpus's folder (the cited files are read there)")
    parser.add_argument("--lang", help="the language of every document of the corpus")
    args = parser.parse_args()
    for path in args.answers:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        print(path.name, json.dumps(counts(rows, args.docs, args.lang)))


if __name__ == "__main__":
    main()
