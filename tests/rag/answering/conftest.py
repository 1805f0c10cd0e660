"""The stages of rag.answering run alone over the real sample handbook index (real embedder, index and
caches); models are the scripted OpenAI-compatible server of tests/fakes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from rag.knowledge_base import KnowledgeBase, make_pipeline
from rag.answering.context import AnswerContext
from rag.answering.candidates import CandidateFinder
from rag.config import Settings
from rag.answering.pipeline import AnswerPipeline
from tests.conftest import HANDBOOK, build


@dataclass
class Handbook:
    data_dir: Path
    index_dir: Path

    def knowledge_base(self, **settings) -> KnowledgeBase:
        return KnowledgeBase(Settings(data_dir=self.data_dir, _env_file=None, **settings), self.index_dir)

    def pipeline(self, **settings) -> AnswerPipeline:
        return make_pipeline(self.knowledge_base(**settings))

    def finder(self, **settings) -> CandidateFinder:
        return self.pipeline(**settings).finder


@pytest.fixture(scope="package")
def handbook(shared_data_dir, tmp_path_factory) -> Handbook:
    index_dir = tmp_path_factory.mktemp("answering-handbook")
    build(KnowledgeBase(Settings(data_dir=shared_data_dir, _env_file=None), index_dir), [HANDBOOK])
    return Handbook(shared_data_dir, index_dir)


def opened(finder: CandidateFinder, question: str, **fields) -> AnswerContext:
    """A question's context with its index loaded, as the runner starts one."""
    ctx = AnswerContext(question, **fields)
    finder.open(ctx)
    return ctx


def found(finder: CandidateFinder, question: str, **fields) -> AnswerContext:
    """A question's context through the retrieval stages (no reranker): its candidates found."""
    ctx = opened(finder, question, **fields)
    ctx.candidates = finder.settle(ctx, finder.search(ctx))
    return ctx


def pooled(pipeline: AnswerPipeline, question: str, **fields) -> AnswerContext:
    """... and the passages its answer is made from."""
    ctx = found(pipeline.finder, question, **fields)
    ctx.candidates, ctx.sources = pipeline.pool.run(ctx)
    return ctx
