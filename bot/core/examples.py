"""Example questions about the documents a knowledge base holds, for any surface to offer (Slack's Home
tab and assistant pane, the Teams app's command list)."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import PurePosixPath

from rag.index.snapshot import FileRecord, Manifest

EXAMPLES = 4
_CJK = re.compile(r"[\u3400-\u9fff]")


def folders(manifest: Manifest) -> list[tuple[str, list[tuple[str, FileRecord]]]]:
    """Top folders with their documents, biggest first; files at the top of a single root go under
    the root's name."""
    single_root = PurePosixPath(manifest.roots[0]).name if len(manifest.roots) == 1 else ""
    groups: dict[str, list[tuple[str, FileRecord]]] = defaultdict(list)
    for name, record in sorted(manifest.files.items()):
        head, sep, _ = name.partition("/")
        groups[head if sep else (single_root or "(top level)")].append((name, record))
    return sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))


def title_of(name: str, record: FileRecord) -> str:
    return (record.title or PurePosixPath(name).stem).strip()


def example_questions(manifest: Manifest, count: int = EXAMPLES) -> list[str]:
    """A few questions about indexed documents: the biggest of each folder in turn, alternating between
    titles in Chinese and in other languages when there are both."""
    queues = [sorted(files, key=lambda f: (-f[1].chunks, f[0])) for _, files in folders(manifest)]
    ordered: list[str] = []
    while any(queues):
        for queue in queues:
            if queue:
                title = title_of(*queue.pop(0))
                if title and title not in ordered:
                    ordered.append(title)
    scripts = [[t for t in ordered if _CJK.search(t)], [t for t in ordered if not _CJK.search(t)]]
    scripts.sort(key=lambda titles: -len(titles))
    titles: list[str] = []
    while len(titles) < count and any(scripts):
        for script in scripts:
            if script and len(titles) < count:
                titles.append(script.pop(0))
    return [f"{t}有哪些要点？" if _CJK.search(t) else f"What are the key points of “{t}”?" for t in titles]
