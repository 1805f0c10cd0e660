"""A knowledge base with three collections, a public folder and access-listed documents, for the leakage
suite. Every sentence (and every title) of a document carries the document's tag, a word found nowhere
else, so any quote, footnote or preview of a document shows its tag in what the user reads; the questions
are the documents' own sentences without their tags."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

TOPICS = {
    "hr": ["leave", "benefits", "hiring", "salaries"],
    "eng": ["deployments", "oncall", "incidents"],
    "finance": ["budget", "invoices", "expenses"],
    "": ["welcome", "office"],  # the root: collection "public"
}
# Access lists: front matter on a Markdown file, a sidecar on a text file.
TEAMS_ONCALL = "aad0000d-0000-4000-8000-0000000ca11d"  # a Teams user's Entra object id
ACCESS = {"hr/salaries.md": ("U0HRLEAD", "S0HRLEADS"), "eng/incidents.txt": ("U0ONCALL", TEAMS_ONCALL)}

_SUBJECTS = ["request", "form", "deadline", "approval", "limit", "contact", "rule", "schedule", "portal", "report"]
_VERBS = ["must be filed", "is approved", "is reviewed", "is renewed", "is published", "is archived"]
_WHEN = ["every Monday", "within five working days", "before the tenth of each month", "twice a year",
         "at the end of each quarter", "within two hours"]
_WHO = ["the team lead", "the service desk", "the controller", "the people partner", "the duty manager",
        "the works council"]


@dataclass(frozen=True)
class Document:
    rel: str
    tag: str  # appears in the title and in every sentence
    sentences: list[str]

    @property
    def collection(self) -> str:
        return self.rel.split("/")[0] if "/" in self.rel else "public"

    @property
    def access(self) -> tuple[str, ...]:
        return ACCESS.get(self.rel, ())


@dataclass(frozen=True)
class Probe:
    question: str
    source: Document  # where the question was taken from


def _tag(rel: str) -> str:
    return "Q" + re.sub(r"[^a-z]", "", rel.split(".")[0].replace("/", "x")).upper() + "Z"


def documents(seed: int = 12) -> list[Document]:
    rng = random.Random(seed)
    docs = []
    for folder, topics in TOPICS.items():
        for topic in topics:
            rel = f"{folder}/{topic}" if folder else topic
            rel += ".txt" if rel in {r.split(".")[0] for r in ACCESS if r.endswith(".txt")} else ".md"
            tag = _tag(rel)
            sentences = []
            for n in range(6):
                subject, verb = rng.choice(_SUBJECTS), rng.choice(_VERBS)
                sentences.append(f"The {topic} {subject} {tag} {verb} {rng.choice(_WHEN)} by {rng.choice(_WHO)}, "
                                 f"case {topic}-{n + 1}.")
            docs.append(Document(rel, tag, sentences))
    return docs


def write(root: Path, docs: list[Document]) -> Path:
    for doc in docs:
        path = root / doc.rel
        path.parent.mkdir(parents=True, exist_ok=True)
        title = f"{doc.rel.split('/')[-1].split('.')[0].capitalize()} {doc.tag}"
        if doc.rel.endswith(".md"):
            front = f"---\naccess: [{', '.join(doc.access)}]\n---\n" if doc.access else ""
            sections = [f"## Part {i // 2 + 1} {doc.tag}\n\n{' '.join(doc.sentences[i:i + 2])}" for i in range(0, 6, 2)]
            path.write_text(front + f"# {title}\n\n" + "\n\n".join(sections) + "\n", encoding="utf-8")
        else:
            path.write_text(f"{title}\n\n" + "\n\n".join(doc.sentences) + "\n", encoding="utf-8")
            if doc.access:
                path.with_name(path.name + ".access").write_text("\n".join(doc.access) + "\n", encoding="utf-8")
    return root


def probes(docs: list[Document]) -> list[Probe]:
    """Two questions from every sentence of every document, without its tag: the sentence itself, and a
    short question about it."""
    found = []
    for doc in docs:
        for sentence in doc.sentences:
            plain = sentence.replace(f" {doc.tag}", "").rstrip(".")
            words = plain.split()
            found.append(Probe(plain + "?", doc))
            found.append(Probe(f"Who handles {' '.join(words[1:3])} {words[-1]}?", doc))
    return found


def leaked_tags(text: str, docs: list[Document], allowed) -> list[str]:
    """Tags of documents `allowed(doc)` refuses that appear in `text`."""
    return [doc.tag for doc in docs if doc.tag in text and not allowed(doc)]
