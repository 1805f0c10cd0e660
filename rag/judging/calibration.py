"""The fitted numbers of the judging package, in one frozen object read from one versioned data file.

rag/judging/calibration.json holds, per value, the value and where it was fitted (`fitted`: the script, the
data, the result file; "by hand" where a person chose it from the measurements named there). The scripts that
fit them write their results into that file (`--write`: benchmarks/calibrate_gate.py, gate_pairs.py,
calibrate_pairs.py) instead of a person copying numbers into code; each write bumps `version`. The file ships
with the package (pyproject.toml's package-data) and rag.code_version's digest covers it, so what was cached
under one calibration is never served under another.

What it holds:

* `gate`: the answerability model per question language (weights, bias, threshold), the passage-cosine
  thresholds of a gate without sentence evidence, the weight of lexical coverage, a reranker's minimum score,
  and the translated-words term per (question, passage) language pair (rag.judging.gate);
* `near_miss`: when a key word counts as missing (rag.judging.near_miss, rag.judging.qualifiers);
* `scales`: the anchors of each language pair's cosine scale, how far an other-language cosine is lifted, and
  how much of a cross-language cosine is measured against the translated question (rag.judging.scales);
* `quotes`: the margins of the quotes' ordering steps (rag.judging.extractive, rag.judging.negation);
* `evidence`: the weights of the sentence score beside the cosine and the margins of its ordering steps
  (rag.judging.evidence).

The gate takes a `Calibration` (`GateConfig.from_calibration`); the near-miss, scale, quote and evidence modules
read the default one's values once, at import, as their module constants.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

PATH = Path(__file__).resolve().parent / "calibration.json"

Pair = tuple[str, str]  # (question language, passage language)


@dataclass(frozen=True)
class AnswerabilityModel:
    """`Σ weight·signal + bias`; the question is answered when that is at least `threshold`."""

    weights: dict[str, float]
    bias: float
    threshold: float = 0.0

    def score(self, signals: Mapping[str, float]) -> float:
        return self.bias + sum(w * signals.get(name, 0.0) for name, w in self.weights.items())


@dataclass(frozen=True)
class GateCalibration:
    models: Mapping[str, AnswerabilityModel]  # per question language (a cosine's scale, rag.judging.scales)
    threshold_zh: float  # the passage cosine's threshold without sentence evidence, per language
    threshold_en: float
    coverage_weight: float
    min_rerank_score: float
    # (question language, passage language) -> (weight, centre) of the translated words' share
    translated: Mapping[Pair, tuple[float, float]]


@dataclass(frozen=True)
class NearMissCalibration:
    related_term: float
    near_miss_below: float
    matched_related: float
    topic_share: float
    matched_said: float
    same_word: float
    spelled_alike: float


@dataclass(frozen=True)
class QuotesCalibration:
    runner_up_margin: float  # a runner-up of the best sentence's section quoted within this of its score
    apart: float  # ... of another section, when its cosine is this close to the best one's
    across: float  # the other language's best quoted next when it scores this close
    own_words: float  # ... an asker's-language unit whose gate failed, when it holds this share of the key words
    sounds_alike: float  # an other-language unit translating less than this share is no second answer
    as_close: float  # a denial leads when it scores this close to the best
    kind_close: float  # ... and a unit giving the kind of answer asked (rag.judging.answer_kind)


@dataclass(frozen=True)
class EvidenceCalibration:
    lexical_weight: float  # the shared rare words' score beside a unit's cosine
    translated_weight: float  # ... and the share of the question's words it holds translated
    row_margin: float  # a table row naming more of the question leads within this of the best row
    says_more: float  # a unit as close as the best leads when it holds this much more of the key words
    general_weight: float  # the share of an other-language unit's closeness to questions in general taken off


@dataclass(frozen=True)
class ScalesCalibration:
    anchors: Mapping[Pair, Mapping[str, tuple[float, float]]]  # level -> (unrelated median, answerable median)
    lift: Mapping[Pair, Mapping[str, float]]  # level -> share of the way to the passage language's scale
    translated_dense: Mapping[str, float]  # question language -> share measured against its translation


@dataclass(frozen=True)
class Calibration:
    version: int
    gate: GateCalibration
    near_miss: NearMissCalibration
    scales: ScalesCalibration
    quotes: QuotesCalibration
    evidence: EvidenceCalibration
    source: Path | None = field(default=None, compare=False)  # the file it was read from

    @classmethod
    def load(cls, path: Path = PATH) -> Calibration:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")), Path(path))

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: Path | None = None) -> Calibration:
        gate, near, scales, quotes = data["gate"], data["near_miss"], data["scales"], data["quotes"]
        models = {lang: AnswerabilityModel(dict(m["weights"]), float(m["bias"]), float(m.get("threshold", 0.0)))
                  for lang, m in gate["models"].items()}
        return cls(
            version=int(data["version"]),
            gate=GateCalibration(
                models=MappingProxyType(models),
                threshold_zh=float(gate["threshold"]["zh"]["value"]),
                threshold_en=float(gate["threshold"]["en"]["value"]),
                coverage_weight=float(gate["coverage_weight"]["value"]),
                min_rerank_score=float(gate["min_rerank_score"]["value"]),
                translated=MappingProxyType({(t["question"], t["passage"]): (float(t["weight"]), float(t["centre"]))
                                             for t in gate["translated"]}),
            ),
            near_miss=NearMissCalibration(**{name: float(near[name]["value"]) for name in (
                "related_term", "near_miss_below", "matched_related", "topic_share", "matched_said", "same_word",
                "spelled_alike")}),
            scales=ScalesCalibration(
                anchors=MappingProxyType({(a["question"], a["passage"]): MappingProxyType(
                    {level: (float(a[level][0]), float(a[level][1])) for level in ("dense", "sentence")})
                    for a in scales["anchors"]}),
                lift=MappingProxyType({(a["question"], a["passage"]): MappingProxyType(
                    {level: float(a[level]) for level in ("dense", "sentence")}) for a in scales["lift"]}),
                translated_dense=MappingProxyType({lang: float(v["value"])
                                                   for lang, v in scales["translated_dense"].items()}),
            ),
            quotes=QuotesCalibration(**{name: float(quotes[name]["value"]) for name in (
                "runner_up_margin", "apart", "across", "own_words", "sounds_alike", "as_close", "kind_close")}),
            evidence=EvidenceCalibration(**{name: float(data["evidence"][name]["value"]) for name in (
                "lexical_weight", "translated_weight", "row_margin", "says_more", "general_weight")}),
            source=source,
        )


@cache
def default() -> Calibration:
    """The calibration that ships with the package, read once per process."""
    return Calibration.load(PATH)


def fitted(script: str, data: str, result: str | None = None) -> dict[str, str]:
    """The provenance written beside a value."""
    return {"script": script, "data": data, **({"result": result} if result else {})}


def write(updates: Mapping[tuple[str, ...], Any], path: Path = PATH) -> Calibration:
    """Set each value at its path of keys in the calibration file (a list of pair entries is addressed by
    "<question>><passage>", e.g. ("scales", "anchors", "zh>en")), bump the version, and return the calibration
    the file now holds (read back: a value the loader cannot read fails here, not in production)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    for keys, value in updates.items():
        node = data
        for key in keys[:-1]:
            node = _child(node, key)
        last = keys[-1]
        if isinstance(node, list):
            entry = _child(node, last)
            question, passage = last.split(">")
            entry.clear()
            entry.update({"question": question, "passage": passage, **value})
        else:
            node[last] = value
    data["version"] = int(data["version"]) + 1
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    Calibration.from_json(json.loads(text))  # refuse to write what would not load
    Path(path).write_text(text, encoding="utf-8")
    return Calibration.load(path)


def _child(node: Any, key: str) -> Any:
    if isinstance(node, list):  # pair entries: "zh>en"
        question, passage = key.split(">")
        for entry in node:
            if entry.get("question") == question and entry.get("passage") == passage:
                return entry
        node.append({"question": question, "passage": passage})
        return node[-1]
    return node.setdefault(key, {})
