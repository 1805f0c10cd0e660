"""benchmarks/quote_form.py: what the broad evaluation counts of how quotes read — markup or code quoted, and a
document introduced in a language it is not written in."""

from __future__ import annotations

from benchmarks.answer_quality import report
from benchmarks.quote_form import counts, mislabelled, quotes_markup

GUIDE = """# 部署指南

服务端需要 Java 17。

```sh
java -version
export APOLLO_PORTAL_DB=ApolloPortalDB
```
"""


def test_a_quote_from_a_code_block_of_the_cited_file_is_code(tmp_path):
    (tmp_path / "guide.md").write_text(GUIDE, encoding="utf-8")
    code = "以下是知识库中与问题最相关的原文摘录：\n> java -version export APOLLO_PORTAL_DB=ApolloPortalDB [1]"
    prose = "以下是知识库中与问题最相关的原文摘录：\n> 服务端需要 Java 17。 [1]"
    assert quotes_markup(code, ["guide.md"], tmp_path)
    assert not quotes_markup(prose, ["guide.md"], tmp_path)


def test_tags_attributes_entities_templates_and_fences_are_markup_wherever_quoted():
    for quoted in ('width="100%" height="600">', "<div class=\"note\">Leave</div>", "{% page \"/leave/\" %}",
                   "{{ site.baseurl }}", "```sh java -version ```"):
        assert quotes_markup(f"Quoted passages:\n> {quoted} [1]", [], None), quoted
    assert quotes_markup("以下是…：\n摘自《&nbsp;》：\n> 正文。 [1]", [], None)  # a title read as an entity
    assert not quotes_markup("Quoted passages:\n> Leave is 26 days a year, see <https://example.com>. [1]", [], None)


def test_an_intro_naming_another_language_than_the_corpus_is_mislabelled():
    answer = "以下是知识库中与问题最相关的原文摘录：\n摘自英文文档《quick start》：\n> 端口 8070。 [1]"
    assert mislabelled(answer, "zh") and not mislabelled(answer, "en")
    asked_in_english = "Quoted passages:\nFrom the Chinese document “quick start”:\n> 端口 8070。 [1]"
    assert not mislabelled(asked_in_english, "zh")


def test_the_report_counts_both_over_every_answer_given(tmp_path):
    rows = [{"refused": False, "answer": "x\n摘自英文文档《a》：\n> {% raw %} [1]", "cited": []},
            {"refused": True, "answer": "Sorry", "cited": []}]
    assert counts(rows, tmp_path, "zh") == {"answers": 1, "quotes_markup": 1, "mislabelled_language": 1}
    judged = [{"id": "q", "answerable": False, "refused": False, "near_miss": False, "ms": 1.0,
               "quotes_markup": True, "mislabelled_language": False}]
    assert report(judged)["quotes_markup"] == 1 and report(judged)["mislabelled_language"] == 0
