"""A git repository as a source: one branch (and optionally one folder of it) kept in a checkout.

The first fetch makes `workdir/checkout` (a half-made one is removed); later fetches download the branch
and move the checkout to its new commit only once the download succeeded, so a failure (unreachable,
refused token, branch gone, timeout) leaves the checkout and the documents as they were. A document's
version is the commit that last changed it and its date that commit's date, so a new commit re-indexes only
the files it changed. With `web_url`, footnotes link to the file on the repository's web view, pinned to
that same commit: the link keeps showing the text that was quoted.

An HTTPS token (`token_env`) reaches git as an `Authorization` header in the environment of the one git
process that needs it (rag.sources.git_cli): never in .git/config, the remote URL or the process list.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from rag.index.metadata import DocumentMeta
from rag.sources.base import CheckReport, Fetched, Progress, SourceError
from rag.sources.config import GitSource
from rag.sources.git_cli import GitFailed, last_commits, output, redact, run_git
from rag.types import SHORT_COMMIT

_CHECKOUT, _PARTIAL, _COMMITS = "checkout", "checkout.partial", "commits.json"
_FETCHED = "refs/sources/fetched"  # where the downloaded branch tip is kept, whatever the branch is called
_FILE_MODES = (b"100644", b"100755")
_LINK_MODE = b"120000"
_LOOPBACK = ("localhost", "127.0.0.1", "::1")

# What git says (LC_ALL=C) when each cause is at fault; matched in this order.
_BRANCH_GONE = ("couldn't find remote ref",)
_REFUSED = ("authentication failed", "could not read username", "could not read password",
            "terminal prompts disabled", "error: 401", "error: 403", "permission denied", "access denied")
_NO_REPOSITORY = ("repository not found", "does not appear to be a git repository", "error: 404")
_UNREACHABLE = ("could not resolve", "failed to connect", "couldn't connect", "connection refused",
                "timed out", "network is unreachable", "connection reset", "empty reply", "error: 5", "ssl", "gnutls")


@dataclass(frozen=True)
class _Remote:
    """The repository as git is given it: the URL without a password, the settings that authenticate."""

    url: str
    shown: str  # for messages: no credential
    config: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    secrets: tuple[str, ...] = field(default=(), repr=False)


@dataclass(frozen=True)
class _Tree:
    """The files of one commit under the source's folder (paths from the repository's top)."""

    files: list[str]
    links: list[str]  # symbolic links: never followed, never left in the checkout


class GitConnector:
    """`spec.branch` of `spec.url`; `env` holds the token's variable; `workdir` (as given to `fetch`) lets
    `check` count the checkout's documents before any fetch in this process."""

    def __init__(self, spec: GitSource, env: Mapping[str, str] = os.environ, *, workdir: Path | None = None,
                 timeout: float = 600.0) -> None:
        self.spec = spec
        self.name = spec.name
        self._env = env
        self._workdir = workdir
        self._timeout = timeout  # seconds a download may take
        self._prefix = str(PurePosixPath("/", spec.path.strip())).strip("/")
        self._pathspec = self._prefix or "."

    def fetch(self, workdir: Path, state: dict[str, Any], progress: Progress) -> Fetched:
        self._workdir = workdir
        try:
            return self._fetch(workdir, state, progress)
        except GitFailed as exc:  # a local git command (the downloads raise SourceError themselves)
            raise SourceError(f"git source {self.name}: {exc}") from None

    def _fetch(self, workdir: Path, state: dict[str, Any], progress: Progress) -> Fetched:
        self._validate()
        remote = self._remote()
        workdir.mkdir(parents=True, exist_ok=True)
        checkout = workdir / _CHECKOUT
        progress(0, 0, f"fetching {remote.shown} ({self.spec.branch})")
        if (checkout / ".git").is_dir():
            commit = self._download(checkout, remote)
            tree = self._tree(checkout, commit)
            if self._head(checkout) != commit:
                self._move(checkout, commit, tree)
        else:
            commit, tree = self._clone(workdir, remote)
        last = self._last_commits(workdir, checkout, commit, tree.files)
        documents = {self._name(path): self._meta(path, last.get(path)) for path in tree.files
                     if _visible(self._name(path))}
        changed, removed = self._changes(checkout, state, commit, documents)
        progress(len(documents), len(documents), f"{len(documents)} files at {commit[:SHORT_COMMIT]}")
        return Fetched(root=checkout / self._prefix if self._prefix else checkout, documents=documents,
                       changed=changed, removed=removed, calls=1, version=commit,
                       state={"commit": commit, "path": self._prefix})

    def check(self) -> CheckReport:
        try:
            self._validate()
            remote = self._remote()
            commit = self._tip(remote)
            detail = f"{remote.shown}: branch {self.spec.branch} at {commit[:SHORT_COMMIT]}"
            checkout = self._workdir / _CHECKOUT if self._workdir else None
            head = self._head(checkout) if checkout and (checkout / ".git").is_dir() else None
            if checkout is None or head is None:
                return CheckReport(True, None, detail + "; not fetched yet")
            count = sum(1 for path in self._tree(checkout, head).files if _visible(self._name(path)))
        except SourceError as exc:
            return CheckReport(False, detail=str(exc))
        except GitFailed as exc:
            return CheckReport(False, detail=f"git source {self.name}: {exc}")
        return CheckReport(True, count, detail + f"; the checkout holds {count} documents at {head[:SHORT_COMMIT]}")

    # -- the remote --------------------------------------------------------------------------------------

    def _validate(self) -> None:
        web = self.spec.web_url
        if web is not None and urlsplit(web).scheme not in ("http", "https"):
            raise SourceError(f"git source {self.name}: web_url must be an http(s) address, "
                              f"got {redact(web)!r}")
        if ".." in PurePosixPath(self.spec.path).parts:
            raise SourceError(f"git source {self.name}: path must be a folder inside the repository, "
                              f"got {self.spec.path!r}")

    def _remote(self) -> _Remote:
        parts = urlsplit(self.spec.url)
        shown = redact(self.spec.url)
        token = self._token()
        url, user = self.spec.url, "x-access-token"  # GitHub's name for a token; GitLab, Gitea take any
        if parts.scheme in ("http", "https") and (parts.username or parts.password):
            user = unquote(parts.username or "") or user
            token = token or unquote(parts.password or "") or None
            host = parts.netloc.rpartition("@")[2]
            url = urlunsplit(parts._replace(netloc=f"{quote(user, safe='')}@{host}" if parts.username else host))
        if token is None:
            return _Remote(url, shown)
        if parts.scheme not in ("http", "https"):
            raise SourceError(f"git source {self.name}: a token is for an https URL, not {shown}",
                              variable=self.spec.token_env)
        if parts.scheme == "http" and parts.hostname not in _LOOPBACK:
            raise SourceError(f"git source {self.name}: refusing to send a token over plain http to "
                              f"{parts.hostname}: use an https URL", variable=self.spec.token_env)
        basic = base64.b64encode(f"{user}:{token}".encode()).decode("ascii")
        config = (("http.extraHeader", ""), ("http.extraHeader", f"Authorization: Basic {basic}"),
                  ("credential.helper", ""))  # no helper asks for, or stores, anything else
        return _Remote(url, shown, config, (token, basic))

    def _token(self) -> str | None:
        variable = self.spec.token_env
        if variable is None:
            return None
        token = self._env.get(variable, "").strip()
        if not token:
            raise SourceError(f"git source {self.name}: {variable} is not set (the access token for "
                              f"{redact(self.spec.url)})", variable=variable)
        return token

    def _download(self, repo: Path, remote: _Remote) -> str:
        """Fetch the branch into `_FETCHED` (the work tree is untouched); its commit."""
        refspec = f"+refs/heads/{self.spec.branch}:{_FETCHED}"
        try:
            run_git(repo, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--end-of-options",
                    remote.url, refspec, config=remote.config, timeout=self._timeout, secrets=remote.secrets)
        except GitFailed as exc:
            raise self._failure(exc, remote) from None
        return output(repo, "rev-parse", "--verify", f"{_FETCHED}^{{commit}}").decode("ascii").strip()

    def _tip(self, remote: _Remote) -> str:
        """The branch's commit on the remote (`git ls-remote`: nothing downloaded, nothing changed)."""
        try:
            done = run_git(Path(tempfile.gettempdir()), "ls-remote", "--end-of-options", remote.url,
                           f"refs/heads/{self.spec.branch}", config=remote.config, timeout=self._timeout,
                           secrets=remote.secrets)
        except GitFailed as exc:
            raise self._failure(exc, remote) from None
        line = done.stdout.decode("ascii", errors="replace").split("\n", 1)[0]
        if not line.strip():
            raise self._missing_branch(remote)
        return line.split()[0]

    def _failure(self, exc: GitFailed, remote: _Remote) -> SourceError:
        """A one-line SourceError naming the cause (and the variable to fix when the token is refused)."""
        where = f"git source {self.name}: {remote.shown}"
        reason = exc.reason.lower()
        if exc.timed_out:
            return SourceError(f"{where} gave no answer within {self._timeout:.0f} s", transient=True)
        if any(s in reason for s in _BRANCH_GONE):
            return self._missing_branch(remote)
        variable = self.spec.token_env
        fix = f"check {variable}" if variable else "set token_env to the variable holding an access token"
        if urlsplit(remote.url).scheme not in ("http", "https"):
            fix = "check the ssh key of the user running the bot"
        if any(s in reason for s in _REFUSED):
            return SourceError(f"{where} refused the credentials ({exc.reason}): {fix}", variable=variable)
        if any(s in reason for s in _NO_REPOSITORY):
            return SourceError(f"{where}: no repository there, or not one this token may read ({exc.reason}): "
                               f"check url, or {fix}", variable=variable)
        if any(s in reason for s in _UNREACHABLE):
            return SourceError(f"{where} cannot be reached ({exc.reason})", transient=True)
        return SourceError(f"{where}: {exc}")

    def _missing_branch(self, remote: _Remote) -> SourceError:
        return SourceError(f"git source {self.name}: {remote.shown} has no branch {self.spec.branch!r}: "
                           "check branch")

    # -- the checkout ------------------------------------------------------------------------------------

    def _clone(self, workdir: Path, remote: _Remote) -> tuple[str, _Tree]:
        partial = workdir / _PARTIAL
        shutil.rmtree(partial, ignore_errors=True)  # a clone a crash left half-made
        try:
            run_git(workdir, "init", "--quiet", _PARTIAL)
            output(partial, "config", "core.symlinks", "false")  # a link becomes a plain file: never followed
            commit = self._download(partial, remote)
            tree = self._tree(partial, commit)
            self._move(partial, commit, tree)
            shutil.rmtree(workdir / _CHECKOUT, ignore_errors=True)  # what is left of a checkout without .git
            partial.rename(workdir / _CHECKOUT)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
        return commit, tree

    def _tree(self, repo: Path, commit: str) -> _Tree:
        if self._prefix:
            kind = run_git(repo, "cat-file", "-t", f"{commit}:{self._prefix}", check=False).stdout.strip()
            if kind != b"tree":
                what = "is a file, not a folder" if kind else "does not exist"
                raise SourceError(f"git source {self.name}: the path {self._prefix!r} {what} on branch "
                                  f"{self.spec.branch} (commit {commit[:SHORT_COMMIT]}): check path")
        files, links = [], []
        listing = output(repo, "ls-tree", "-r", "-z", "--full-tree", commit, "--", self._pathspec)
        for entry in listing.split(b"\0"):
            meta, _, path = entry.partition(b"\t")
            mode = meta.split(b" ", 1)[0]
            if mode in _FILE_MODES:
                files.append(os.fsdecode(path))
            elif mode == _LINK_MODE:
                links.append(os.fsdecode(path))
        return _Tree(files, links)

    def _head(self, repo: Path) -> str | None:
        done = run_git(repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
        return done.stdout.decode("ascii").strip() or None

    def _move(self, repo: Path, commit: str, tree: _Tree) -> None:
        """The work tree at `commit` exactly: nothing untracked, no symbolic link."""
        output(repo, "checkout", "--quiet", "--force", "--detach", commit)
        output(repo, "clean", "-ffdxq")
        for link in tree.links:
            (repo / link).unlink(missing_ok=True)

    # -- the documents -----------------------------------------------------------------------------------

    def _name(self, path: str) -> str:
        return path[len(self._prefix) + 1:] if self._prefix else path

    def _meta(self, path: str, last: tuple[str, str] | None) -> DocumentMeta:
        if last is None:  # no commit in the branch's history names it (an evil merge): the file's own values
            return DocumentMeta()
        commit, day = last
        url = self._link(path, commit)
        return DocumentMeta(url=url, link="lines" if url else "plain", version=commit[:SHORT_COMMIT], date=day)

    def _link(self, path: str, commit: str) -> str | None:
        """The file on the web view at `commit`: `{web_url}/blob/{commit}/{path}` (GitHub, GitLab, Gitea), or
        the web_url's own `{path}`, `{commit}`, `{branch}` filled in."""
        web = self.spec.web_url
        if not web:
            return None
        quoted = quote(os.fsencode(path), safe="/")
        if "{" not in web:
            return f"{web.rstrip('/')}/blob/{commit}/{quoted}"
        branch = quote(self.spec.branch, safe="/")
        return web.replace("{path}", quoted).replace("{commit}", commit).replace("{branch}", branch)

    def _last_commits(self, workdir: Path, repo: Path, commit: str,
                      paths: list[str]) -> dict[str, tuple[str, str]]:
        """Each path's last commit. What the previous fetch found is kept (`commits.json`): only the commits
        since then are read, and nothing at all when the branch did not move."""
        cache = _read_json(workdir / _COMMITS)
        base, before = cache.get("commit"), {k: tuple(v) for k, v in cache.get("files", {}).items()}
        known: dict[str, tuple[str, str]] = {}
        if base == commit:
            known = before
        elif base and self._is_ancestor(repo, base, commit):
            known = before | last_commits(repo, f"{base}..{commit}", self._pathspec, set(paths))
        missing = {p for p in paths if p not in known}
        if missing:
            known |= last_commits(repo, commit, self._pathspec, missing)
        found = {p: known[p] for p in paths if p in known}
        _write_json(workdir / _COMMITS, {"commit": commit, "files": found})
        return found

    def _is_ancestor(self, repo: Path, old: str, new: str) -> bool:
        return run_git(repo, "merge-base", "--is-ancestor", old, new, check=False).returncode == 0

    def _changes(self, repo: Path, state: dict[str, Any], commit: str,
                 documents: dict[str, DocumentMeta]) -> tuple[list[str], list[str]]:
        """The documents `commit` added or changed, and those it removed, since the previous fetch's commit
        (a rename is both). Without a previous commit to compare with, every document is new."""
        old = state.get("commit")
        if not isinstance(old, str) or state.get("path", self._prefix) != self._prefix or \
                run_git(repo, "cat-file", "-e", f"{old}^{{commit}}", check=False).returncode != 0:
            return sorted(documents), []
        if old == commit:
            return [], []
        raw = output(repo, "diff", "--raw", "-z", "-M", "--no-abbrev", old, commit, "--", self._pathspec)
        added, gone = (sorted(self._name(path) for path in paths) for paths in _file_changes(raw))
        return [n for n in added if n in documents], [n for n in gone if _visible(n) and n not in documents]


def _file_changes(raw: bytes) -> tuple[set[str], set[str]]:
    """The regular files a `git diff --raw -z -M` added or changed, and those it removed (a rename's origin,
    a file that became a link)."""
    changed: set[str] = set()
    removed: set[str] = set()
    tokens = raw.split(b"\0")
    i = 0
    while i + 1 < len(tokens):
        old_mode, new_mode, *_, status = tokens[i].lstrip(b":").split(b" ")
        kind = status[:1]
        paths = [os.fsdecode(t) for t in tokens[i + 1:i + (3 if kind in (b"R", b"C") else 2)]]
        i += 1 + len(paths)
        if old_mode in _FILE_MODES and (kind in (b"D", b"R") or new_mode not in _FILE_MODES):
            removed.add(paths[0])
        if kind != b"D" and new_mode in _FILE_MODES:
            changed.add(paths[-1])
    return changed, removed


def _visible(name: str) -> bool:
    """Whether the indexer reads it: no part of its name starts with a dot (.github/, .gitignore)."""
    return not any(part.startswith(".") for part in name.split("/"))


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_json(path: Path, data: dict[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out, ensure_ascii=False)
    os.replace(tmp, path)
