"""The judging package's fitted numbers: one versioned file, read into one frozen object, written by the fit
scripts, shipped with the package and covered by the code version that keys the caches."""

from __future__ import annotations

import fnmatch
import inspect
import json
import os
import random
import shutil
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

import rag.judging.answer_kind as answer_kind
import rag.judging.extractive as extractive
import rag.judging.gate as gate_module
import rag.judging.negation as negation
import rag.judging.near_miss as near_miss
import rag.judging.qualifiers as qualifiers
import rag.judging.scales as scales
from benchmarks import calibrate_gate, calibrate_pairs, gate_pairs
from rag.code_version import PACKAGE, SUFFIXES, code_version, digest_of
from rag.judging import calibration
from rag.judging.calibration import Calibration
from rag.judging import evidence as evidence_module
from rag.judging.evidence import Evidence
from rag.judging.gate import EvidenceGate, GateConfig
from rag.types import Chunk, Hit

PROJECT = Path(__file__).resolve().parents[3]
RESULTS = PROJECT / "benchmarks" / "results"


@pytest.fixture
def copy(tmp_path) -> Path:
    path = tmp_path / "calibration.json"
    shutil.copyfile(calibration.PATH, path)
    return path


def test_the_judging_modules_read_the_shipped_calibration():
    fitted = calibration.default()
    assert fitted == Calibration.load() and isinstance(fitted.version, int)
    assert gate_module.MODELS == dict(fitted.gate.models) and gate_module.TRANSLATED == {("zh", "en"): (3.0, 0.3)}
    assert (gate_module.THRESHOLD_ZH, gate_module.THRESHOLD_EN) == (fitted.gate.threshold_zh, fitted.gate.threshold_en)
    assert GateConfig().min_rerank_score == fitted.gate.min_rerank_score == 0.35
    assert scales.ANCHORS[("zh", "en")]["dense"] == fitted.scales.anchors[("zh", "en")]["dense"] == (0.773, 0.8117)
    assert scales.LIFT[("zh", "en")] == {"dense": 0.75, "sentence": 0.5} and scales.TRANSLATED_DENSE == {"en": 0.6}
    assert (near_miss.SAME_WORD, near_miss.RELATED_TERM, qualifiers.SPELLED_ALIKE) == (0.92, 0.82, 0.85)
    assert (extractive.APART, extractive.ACROSS, negation.AS_CLOSE) == (0.01, 0.05, fitted.quotes.as_close)
    assert answer_kind.KIND_CLOSE == fitted.quotes.kind_close == 0.02
    assert inspect.signature(extractive.choose_quotes).parameters["margin"].default == fitted.quotes.runner_up_margin
    assert (evidence_module.LEXICAL_WEIGHT, evidence_module.TRANSLATED_WEIGHT, evidence_module.ROW_MARGIN,
            evidence_module.SAYS_MORE, evidence_module.GENERAL_WEIGHT) == (0.03, 0.05, 0.08, 0.25, 0.6)
    assert evidence_module.GENERAL_WEIGHT == fitted.evidence.general_weight
    with pytest.raises(FrozenInstanceError):
        fitted.version = 2  # type: ignore[misc]


def test_every_value_says_where_it_was_fitted():
    data = json.loads(calibration.PATH.read_text(encoding="utf-8"))

    def values(node, path=()):
        if isinstance(node, dict) and ("value" in node or "weights" in node or "question" in node):
            yield path, node
        elif isinstance(node, dict):
            for key, child in node.items():
                yield from values(child, (*path, key))
        elif isinstance(node, list):
            for child in node:
                yield from values(child, path)

    found = list(values({k: data[k] for k in ("gate", "near_miss", "scales", "quotes")}))
    assert len(found) >= 26
    for path, node in found:
        assert node["fitted"]["script"] and node["fitted"]["data"], path


def _rows(n: int = 400) -> list[dict]:
    """Signal rows as calibrate_gate.signals makes them: answerable questions' cosines near .95, the others'
    near .85."""
    rng = random.Random(3)
    rows = []
    for i in range(n):
        answerable = i % 2 == 0
        cosine = rng.uniform(0.93, 0.99) if answerable else rng.uniform(0.80, 0.90)
        rows.append({"id": f"q{i}", "answerable": answerable, "dense": cosine, "sentence": cosine,
                     "coverage": 0.5, "sentence_coverage": 0.5, "missing_names": 0.0, "missing_terms": 0.0,
                     "evidence_ms": 1.0})
    return rows


def _decide(fitted: Calibration):
    chunk = Chunk("c1", "f1.md", "Security", ("Passwords",), "Passwords must be at least 14 characters long.",
                  0, 48, None, None, "v1", "2026-01-01")
    hits = [Hit(chunk, 0.1, {"dense": 1}, {"dense": 0.88})]
    evidence = Evidence([], signals={"sentence": 0.88, "sentence_coverage": 0.5, "missing_names": 0.0})
    gate = EvidenceGate(GateConfig.from_calibration(fitted))
    return gate.decide("How long must a password be?", hits, lambda ts: {t: 1.0 for t in ts}, evidence=evidence)


def test_the_gate_fit_writes_a_calibration_that_loads_and_changes_a_decision(copy):
    before = Calibration.load(copy)
    results = {"max_false_refusal": 0.04, "sets": {"squad2": calibrate_gate.report_for("squad2", _rows(), 0.04)}}
    written = calibration.write(calibrate_gate.calibration_updates(results), copy)
    assert written == Calibration.load(copy) and written.version == before.version + 1
    assert written.gate.models["en"] != before.gate.models["en"] and written.gate.models["zh"] == before.gate.models["zh"]
    assert written.gate.threshold_en > 0.9 and written.near_miss == before.near_miss
    assert "calibrate_gate.py" in json.loads(copy.read_text())["gate"]["models"]["en"]["fitted"]["script"]
    # A cosine of .88 answers under the shipped model (its threshold .818) and not under one fitted where
    # answerable questions sit near .95
    assert _decide(before).answer and not _decide(written).answer


def test_the_stored_fit_results_written_give_the_shipped_models_and_anchors(copy):
    shipped = Calibration.load(copy)
    gate_results = json.loads((RESULTS / "calibrate_gate.json").read_text())
    written = calibration.write(calibrate_gate.calibration_updates(gate_results), copy)
    assert dict(written.gate.models) == dict(shipped.gate.models)
    pair_results = json.loads((RESULTS / "calibrate_pairs.json").read_text())
    written = calibration.write(calibrate_pairs.calibration_updates(pair_results), copy)
    assert written.scales.anchors == shipped.scales.anchors and written.version == shipped.version + 2


def test_the_translated_term_is_chosen_on_the_grid_and_written(copy):
    table = [{"weight": w, "centre": c, "false_refusals": f, "unrelated_refused": u}
             for w, c, f, u in ((0.0, 0.3, 5, 35), (3.0, 0.3, 1, 42), (4.0, 0.3, 1, 42), (4.0, 0.25, 3, 50))]
    chosen = gate_pairs.choose_translated(table, answerable=38)  # at most 1.9 false refusals
    assert (chosen["weight"], chosen["centre"]) == (3.0, 0.3)
    written = calibration.write(gate_pairs.calibration_updates("zh>en", table[3], 38, 60), copy)
    assert written.gate.translated == {("zh", "en"): (4.0, 0.25)}


def test_a_value_the_loader_cannot_read_is_not_written(copy):
    text = copy.read_text()
    with pytest.raises(KeyError):
        calibration.write({("gate", "threshold", "zh"): {"threshold": 0.9}}, copy)
    assert copy.read_text() == text


def test_the_calibration_ships_with_the_package_and_keys_the_caches(tmp_path):
    pyproject = tomllib.loads((PROJECT / "pyproject.toml").read_text())
    shipped = pyproject["tool"]["setuptools"]["package-data"]
    data_files = [p for p in PACKAGE.rglob("*") if p.suffix in SUFFIXES and p.suffix != ".py"
                  and "__pycache__" not in p.parts]
    assert PACKAGE / "judging" / "calibration.json" in data_files
    for path in data_files:  # each data file the code reads is in the wheel (a non-editable install)
        package = ".".join(path.parent.relative_to(PACKAGE.parent).parts)
        assert any(fnmatch.fnmatch(path.name, pattern) for pattern in shipped.get(package, [])), path
    copied = tmp_path / "rag"
    shutil.copytree(PACKAGE, copied, ignore=shutil.ignore_patterns("__pycache__"))
    assert digest_of(copied) == code_version()
    fitted = copied / "judging" / "calibration.json"
    data = json.loads(fitted.read_text())
    fitted.write_text(json.dumps(data | {"version": data["version"] + 1}))
    assert digest_of(copied) != code_version(), "a new calibration is a new code version"


def test_a_wheel_of_the_package_holds_the_calibration_and_reads_it_there(tmp_path):
    """What `scripts/install --app DIR` installs: the wheel setuptools builds from pyproject.toml (a
    non-editable install), unpacked, answers from its own calibration file."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (PROJECT / name).exists():
            shutil.copyfile(PROJECT / name, source / name)
    shutil.copytree(PACKAGE, source / "rag", ignore=shutil.ignore_patterns("__pycache__"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                            "--disable-pip-version-check", str(source), "-w", str(tmp_path / "wheel")],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    wheel = next((tmp_path / "wheel").glob("*.whl"))
    installed = tmp_path / "app"
    with zipfile.ZipFile(wheel) as archive:
        assert "rag/judging/calibration.json" in archive.namelist()
        archive.extractall(installed)
    read = subprocess.run([sys.executable, "-c", "from rag.judging import calibration; "
                           "print(calibration.default().source, calibration.default().version)"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(installed)})
    assert read.returncode == 0, read.stderr
    assert read.stdout.split() == [str(installed / "rag" / "judging" / "calibration.json"),
                                   str(calibration.default().version)]
