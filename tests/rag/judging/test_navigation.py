"""Navigation passages — a README that is a table of contents, a docs sidebar — on the embedded default (real
index): never the first source of an answer to a content question, never quoted, still found by a search for
the pages they list."""

from __future__ import annotations

import pytest

from rag.answering.fuse import Fuse
from rag.config import Settings
from rag.knowledge_base import KnowledgeBase
from rag.judging.navigation import content_first, is_navigation
from tests.conftest import built_index
from tests.rag.judging.test_extractive import ask, quoted

README = """# Our Handbook

## Benefits and Perks
* [Health Care and Disability Insurance](https://example.com/handbook/Health%20Care.md)
* [Vacation and Sick Leave](https://example.com/handbook/Vacation%20and%20Sick%20Leave.md)
* [Holiday List](https://example.com/handbook/Holiday%20List.md)
* [New Parent Leave](https://example.com/handbook/New%20Parent%20Leave.md)
* [Sick Leave for Family Members](https://example.com/handbook/Family%20Sick%20Leave.md)
* [Vacation Carry-over](https://example.com/handbook/Vacation%20Carry-over.md)
"""
VACATION = """# Vacation and Sick Leave

Every full-time employee gets 25 days of paid vacation a year, on top of the public holidays. Tell your
manager two weeks before you take more than three days in a row.

Sick leave is not counted against your vacation: stay home when you are ill and let your team know in the
morning.
"""
SIDEBAR = """- [**首页**](zh/README.md)

- 客户端指南
  - [Java 客户端使用指南](zh/client/java-sdk-user-guide.md)
  - [.Net 客户端使用指南](zh/client/dotnet-sdk-user-guide.md)
  - [Golang 客户端使用指南](zh/client/golang-sdks-user-guide.md)
  - [Python 客户端使用指南](zh/client/python-sdks-user-guide.md)

- 部署文档
  - [Quick Start](zh/deployment/quick-start.md)
  - [分布式部署指南](zh/deployment/distributed-deployment-guide.md)
"""
JAVA = """# Java 客户端使用指南

## 一、准备工作

Apollo 的 Java 客户端依赖 Java 1.8 及以上版本，在 Spring Boot 应用中同样适用。使用前需要在应用中配置 app.id，
它是应用的唯一身份标识。
"""


@pytest.fixture(scope="module")
def documents(shared_data_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("navigation-docs")
    (folder / "README.md").write_text(README, encoding="utf-8")
    (folder / "vacation.md").write_text(VACATION, encoding="utf-8")
    (folder / "_sidebar.md").write_text(SIDEBAR, encoding="utf-8")
    (folder / "java-sdk-user-guide.md").write_text(JAVA, encoding="utf-8")
    return built_index(shared_data_dir, tmp_path_factory, "navigation-index", [folder])


def test_a_table_of_contents_is_navigation_and_prose_with_links_is_not():
    assert is_navigation(README.split("\n\n", 1)[1])
    assert is_navigation(SIDEBAR)
    assert not is_navigation(VACATION)
    with_links = ("Read [the travel policy](https://example.com/travel) before you book, and file receipts "
                  "in [Expensify](https://expensify.com) within 30 days of the trip; a missing receipt is not "
                  "paid.")
    assert not is_navigation(with_links)
    described = ("* [`app.id`](ids.md): the application's identity, set in `app.properties` or as a system "
                 "property when the process starts.\n* [`apollo.meta`](meta.md): the address of the meta "
                 "server, one per environment, read at start-up.")
    assert not is_navigation(described), "a list of settings, each explained, is content"
    assert not is_navigation("See [the guide](guide.md)."), "a single link is no list of links"


def test_navigation_ranks_after_every_content_passage_in_its_own_order():
    first, second = "* [Leave](leave.md)\n* [Travel](travel.md)", "* [Pay](pay.md)\n* [Benefits](benefits.md)"
    texts = [first, "Leave is paid.", second, "Travel is booked by the office."]
    assert content_first(texts, str) == ["Leave is paid.", "Travel is booked by the office.", first, second]


def test_a_table_of_contents_is_never_the_first_source_nor_quoted(documents):
    answer = ask(documents, "How much vacation and sick leave do I get?")
    assert not answer.refused
    assert answer.citations[0].chunk.file == "vacation.md"
    assert answer.sources[0].file == "vacation.md"
    assert "25 days of paid vacation" in quoted(answer)
    assert all(c.chunk.file != "README.md" for c in answer.citations)
    assert "Holiday List" not in answer.text


def test_a_docs_sidebar_is_never_the_first_source_of_a_chinese_answer(documents):
    answer = ask(documents, "Java 客户端使用指南里说需要什么版本的 Java？")
    assert not answer.refused
    assert answer.sources[0].file == "java-sdk-user-guide.md"
    assert "Java 1.8 及以上" in quoted(answer)
    assert all(c.chunk.file != "_sidebar.md" for c in answer.citations)
    assert "Golang" not in answer.text


def test_a_table_of_contents_stays_findable_by_the_names_of_its_pages(documents):
    data_dir, index_dir = documents
    kb = KnowledgeBase(Settings(data_dir=data_dir, _env_file=None), index_dir)
    hits = kb.retriever.search("Python 客户端使用指南 Golang 客户端使用指南", top_k=10)
    files = [hit.chunk.file for hit in hits]
    assert "_sidebar.md" in files, "a search for the pages it lists still finds it"
    navigation = [hit.chunk.navigation for hit in hits]
    assert navigation == sorted(navigation), "after every content passage"


def test_the_question_and_its_rewrite_fused_keep_navigation_after_content(documents):
    data_dir, index_dir = documents
    kb = KnowledgeBase(Settings(data_dir=data_dir, _env_file=None), index_dir)
    # Each list ranked as the search returns it, then the sidebar put first in both, as a reranker might
    lists = []
    for query in ("Java 客户端使用指南", "Golang 客户端使用指南"):
        hits = kb.retriever.search(query, top_k=10)
        lists.append(sorted(hits, key=lambda hit: not hit.chunk.navigation))
    assert lists[0][0].chunk.navigation and lists[1][0].chunk.navigation
    fused = Fuse(rrf_k=60, depth=10).run(lists)
    navigation = [hit.chunk.navigation for hit in fused]
    assert any(navigation) and navigation == sorted(navigation)
