"""benchmarks/ablation.py switches a heuristic off where the answering code calls it, and only for its run."""

from __future__ import annotations

import importlib

import pytest

from benchmarks.ablation import VARIANTS, switched_off


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v != "none"])
def test_each_variant_names_functions_that_exist(variant):
    for module, name, _ in VARIANTS[variant]:
        assert callable(getattr(importlib.import_module(module), name)), f"{module}.{name}"


def test_a_switched_off_heuristic_is_neutral_in_every_module_that_imported_it_and_back_afterwards():
    import rag.answering.pipeline  # imports asked_part by name
    from rag.answering.framing import asked_part

    asked = "Hi team, quick one: how many days of annual leave do I get? Thanks!"
    assert rag.answering.pipeline.asked_part(asked) != asked.strip()

    with switched_off("framing"):
        assert rag.answering.pipeline.asked_part(asked) == asked.strip()

    assert rag.answering.pipeline.asked_part is asked_part and rag.answering.pipeline.asked_part(asked) != asked.strip()
