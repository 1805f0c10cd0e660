"""The held-out corpora of the broad evaluation: real public knowledge bases, each at a pinned commit.

    .venv/bin/python benchmarks/corpora.py [--corpora clef-handbook,apollo-zh] [--cache DIR] [--mirrors DIR]
        [--check] [--json]

benchmarks/corpora/corpora.json names each corpus's repository, commit, folder and licence
(benchmarks/corpora/README.md says where each comes from and why its licence allows this). Each corpus's
Markdown files (`*.md` under its folder, the folder's prefix removed) are written to CACHE/NAME/, outside the
project: the text is not committed. A corpus already there at its pinned commit is left as it is.

Where the text comes from, in this order:
  * a snapshot that the search tool's `fetch` brought to MIRRORS/OWNER+NAME/repo (a bare git directory), if
    it holds the pinned commit;
  * otherwise `git fetch` of that one commit from GitHub into a temporary repository (needs GitHub access;
    where there is none the corpus is reported as missing, with the reason).

With --check, each corpus's questions (benchmarks/corpora/NAME/questions.jsonl) are then checked against its
text: every gold passage is in its file and holds one of the row's answer strings, each group of `answers_all`
is in the row's gold passages, and no term a near-topic row lists in `checked_absent` anywhere in the corpus.

CACHE: --cache, else $BENCH_CORPORA, else ~/.cache/ai-employee/corpora. MIRRORS: --mirrors, else the
`.mirror` folder beside the project. Progress goes to stderr; with --json one JSON object (per corpus: its
folder, files, characters, commit and where the text came from) goes to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import PROJECT  # noqa: E402

MANIFEST = PROJECT / "benchmarks" / "corpora" / "corpora.json"
DEFAULT_CACHE = Path(os.environ.get("BENCH_CORPORA") or Path.home() / ".cache" / "ai-employee" / "corpora")
DEFAULT_MIRRORS = PROJECT.parent / ".mirror"
QUESTIONS = PROJECT / "benchmarks" / "corpora"
GITHUB = "https://github.com/"
GIT_SECONDS = 300  # the deadline of one git command (a fetch of one commit of a large repository)


@dataclass(frozen=True)
class Corpus:
    name: str
    repo: str  # owner/name on GitHub
    commit: str
    folder: str  # inside the repository; "" for its root
    lang: str
    licence: str
    what: str


def load_manifest(path: Path = MANIFEST) -> dict[str, Corpus]:
    rows = json.loads(path.read_text(encoding="utf-8"))
    return {name: Corpus(name=name, **row) for name, row in rows.items()}


def docs_dir(name: str, cache: Path = DEFAULT_CACHE) -> Path:
    return cache / name


def _stamp(cache: Path, name: str) -> Path:
    return cache / f"{name}.json"


def is_materialised(corpus: Corpus, cache: Path) -> bool:
    stamp = _stamp(cache, corpus.name)
    if not stamp.exists() or not docs_dir(corpus.name, cache).is_dir():
        return False
    return json.loads(stamp.read_text(encoding="utf-8")).get("commit") == corpus.commit


def _git(git_dir: Path, *args: str, binary: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, text=not binary,
                          timeout=GIT_SECONDS, check=False)


def _has_commit(git_dir: Path, commit: str) -> bool:
    return git_dir.is_dir() and _git(git_dir, "cat-file", "-e", f"{commit}^{{commit}}").returncode == 0


def _fetched(corpus: Corpus, into: Path) -> Path:
    """A bare repository holding just the pinned commit, fetched from GitHub (raises RuntimeError)."""
    git_dir = into / "repo.git"
    subprocess.run(["git", "init", "--bare", "-q", str(git_dir)], check=True, timeout=GIT_SECONDS)
    url = f"{GITHUB}{corpus.repo}.git"
    try:
        done = _git(git_dir, "fetch", "--depth=1", "--no-tags", "-q", url, corpus.commit)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"git fetch of {url} took over {GIT_SECONDS} s") from None
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
        raise RuntimeError(f"git fetch of {url} failed: {reason}")
    return git_dir


def _markdown_files(git_dir: Path, corpus: Corpus) -> dict[str, bytes]:
    """The folder's `*.md` files at the pinned commit, by path under the folder.

    Only the Markdown blobs are read, so a snapshot missing some large non-Markdown file (an image a
    snapshot left out) still gives the corpus."""
    pathspec = ["--", corpus.folder] if corpus.folder else []
    listed = _git(git_dir, "ls-tree", "-r", "-z", corpus.commit, *pathspec, binary=True)
    if listed.returncode != 0:
        raise RuntimeError(f"git ls-tree failed: {listed.stderr.decode(errors='replace').strip()}")
    files = {}
    for entry in filter(None, listed.stdout.decode("utf-8").split("\0")):
        mode_type_blob, name = entry.split("\t", 1)
        mode, kind, blob = mode_type_blob.split()
        path = PurePosixPath(name)
        if kind != "blob" or mode == "120000" or path.suffix.lower() != ".md":  # files only, not links
            continue
        done = _git(git_dir, "cat-file", "blob", blob, binary=True)
        if done.returncode != 0:
            raise RuntimeError(f"git cat-file of {name} failed: {done.stderr.decode(errors='replace').strip()}")
        rel = path.relative_to(corpus.folder) if corpus.folder else path
        files[rel.as_posix()] = done.stdout
    return files


def _write(corpus: Corpus, files: dict[str, bytes], cache: Path, source: str) -> dict[str, object]:
    """The files written to a fresh folder, which then takes the corpus's place (never half a corpus)."""
    cache.mkdir(parents=True, exist_ok=True)
    target = docs_dir(corpus.name, cache)
    fresh = Path(tempfile.mkdtemp(prefix=f".{corpus.name}-", dir=cache))
    for rel, data in files.items():
        path = fresh / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    shutil.rmtree(target, ignore_errors=True)
    fresh.rename(target)
    chars = sum(len(data.decode("utf-8", errors="replace")) for data in files.values())
    summary = {"dir": str(target), "files": len(files), "chars": chars, "commit": corpus.commit,
               "repo": corpus.repo, "folder": corpus.folder, "source": source}
    _stamp(cache, corpus.name).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


def materialise(corpus: Corpus, cache: Path = DEFAULT_CACHE, mirrors: Path = DEFAULT_MIRRORS) -> dict[str, object]:
    """CACHE/NAME/ holding the corpus at its pinned commit; what was done (raises RuntimeError)."""
    if is_materialised(corpus, cache):
        return json.loads(_stamp(cache, corpus.name).read_text(encoding="utf-8")) | {"source": "already there"}
    mirror = mirrors / corpus.repo.replace("/", "+") / "repo"
    if _has_commit(mirror, corpus.commit):
        return _write(corpus, _markdown_files(mirror, corpus), cache, f"snapshot {mirror}")
    with tempfile.TemporaryDirectory(prefix="corpus-fetch-") as tmp:
        git_dir = _fetched(corpus, Path(tmp))
        return _write(corpus, _markdown_files(git_dir, corpus), cache, "git fetch from GitHub")


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def _row_problems(row: dict, texts: dict[str, str]) -> list[str]:
    where = row["id"]
    if not row["answerable"]:
        found = [(term, name) for term in row.get("checked_absent", []) for name, text in texts.items()
                 if term.lower() in text.lower()]
        return ([f"{where}: a near-topic row has gold or answers"] if row["gold"] or row["answers"] else []) + \
            [f"{where}: {term!r} is in {name}" for term, name in found]
    problems = [f"{where}: gold passage not in {g['file']}" for g in row["gold"]
                if _squash(g["text"]) not in _squash(texts.get(g["file"], ""))]
    accepted = row["answers"] + [a for group in row.get("answers_all", []) for a in group]
    problems += [f"{where}: no answer string in its gold passage of {g['file']}" for g in row["gold"]
                 if not any(_squash(a) in _squash(g["text"]) for a in accepted)]
    gold = _squash(" ".join(g["text"] for g in row["gold"]))
    for group in row.get("answers_all") or [row["answers"]]:
        if not any(_squash(a) in gold for a in group):
            problems.append(f"{where}: none of {group} in the gold passages")
    if row.get("kind") == "multi-document" and len({g["file"] for g in row["gold"]}) < 2:
        problems.append(f"{where}: a multi-document row with one gold file")
    return problems


def question_problems(corpus: Corpus, cache: Path = DEFAULT_CACHE, questions: Path = QUESTIONS) -> list[str]:
    """What in the corpus's questions the materialised text does not bear out (nothing: all checked)."""
    root = docs_dir(corpus.name, cache)
    texts = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in root.rglob("*.md")}
    lines = (questions / corpus.name / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [problem for line in lines if line.strip() for problem in _row_problems(json.loads(line), texts)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpora", default="", help="comma-separated names (default: all of corpora.json)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--check", action="store_true", help="check each corpus's questions against its text")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args()
    manifest = load_manifest()
    names = [n for n in args.corpora.split(",") if n] or list(manifest)
    unknown = [n for n in names if n not in manifest]
    if unknown:
        sys.exit(f"unknown corpus {', '.join(unknown)}: one of {', '.join(manifest)}")
    results: dict[str, object] = {}
    for name in names:
        print(f"{name}: {manifest[name].repo} at {manifest[name].commit[:12]} …", file=sys.stderr, flush=True)
        try:
            results[name] = materialise(manifest[name], args.cache, args.mirrors)
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            results[name] = {"missing": str(exc)}
            print(f"{name}: missing: {exc}", file=sys.stderr, flush=True)
            continue
        done = results[name]
        print(f"{name}: {done['files']} files, {done['chars']:,} characters in {done['dir']} ({done['source']})",
              file=sys.stderr, flush=True)
        if args.check:
            done["question_problems"] = question_problems(manifest[name], args.cache)
            print(f"{name}: questions checked, {len(done['question_problems'])} problems", file=sys.stderr,
                  *done["question_problems"], sep="\n  ", flush=True)
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=2))
    if any("missing" in r or r.get("question_problems") for r in results.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
