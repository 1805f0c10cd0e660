"""A git "server" for the tests: a bare repository on disk and a work clone that commits and pushes to it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def git(cwd: Path, *args: str, date: str = "2026-01-05T10:00:00+00:00") -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="Ann", GIT_AUTHOR_EMAIL="a@x",
               GIT_COMMITTER_NAME="Ann", GIT_COMMITTER_EMAIL="a@x", GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


class Origin:
    """A bare repository and a work clone of it that commits and pushes."""

    def __init__(self, root: Path, name: str = "docs.git") -> None:
        self.bare = root / name
        self.work = root / "work"
        root.mkdir(parents=True, exist_ok=True)
        git(root, "init", "--quiet", "--bare", "--initial-branch=main", str(self.bare))
        git(root, "init", "--quiet", "--initial-branch=main", str(self.work))
        git(self.work, "remote", "add", "origin", str(self.bare))

    def commit(self, files: dict[str, str | None], date: str = "2026-01-05T10:00:00+00:00",
               branch: str = "main") -> str:
        """Write (or delete, for None) `files`, commit them at `date` and push; the new commit."""
        for name, text in files.items():
            path = self.work / name
            if text is None:
                git(self.work, "rm", "--quiet", "--", name)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
                git(self.work, "add", "--", name)
        git(self.work, "commit", "--quiet", "-m", f"change {len(files)} files", date=date)
        git(self.work, "push", "--quiet", "origin", f"HEAD:refs/heads/{branch}")
        return git(self.work, "rev-parse", "HEAD")
