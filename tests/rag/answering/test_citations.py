import pytest

from rag.answering.citations import MarkerRewriter, finalize
from rag.safety.markers import neutralise, strip_canonical
from rag.judging.support import SupportScorer
from rag.types import Chunk, Citation


def chunk(n: int, text: str, title: str = "Travel Policy", section: tuple[str, ...] = ("Meals",), page: int | None = 3) -> Chunk:
    return Chunk(id=f"c{n}", file=f"f{n}.md", title=title, heading_path=section, text=text, start=0, end=len(text),
                 page=page, page_end=page, doc_version="2026-11-02", doc_date="2026-11-02")


def rewrite(text: str, sources: int = 3, pieces: int = 1) -> tuple[str, list[int]]:
    rw = MarkerRewriter(sources)
    step = max(1, len(text) // pieces)
    out = "".join(rw.feed(text[i:i + step]) for i in range(0, len(text), step)) + rw.flush()
    return out, rw.order


@pytest.mark.parametrize(("raw", "expected"), [
    ("A [S2]. B [S1][S3].", "A [1]. B [2][3]."),
    ("A [S2, S3].", "A [1][2]."),
    ("A【S2】。B［S3］。", "A[1]。B[2]。"),
    ("A [s 3].", "A [1]."),
    ("A [S1-S3].", "A [1][2][3]."),
    ("A [Source 2] and [S3].", "A [1] and [2]."),
    ("A [S7]. B [S0]. C [S2].", "A . B . C [1]."),
    ("A [S2][S2] B [S2].", "A [1] B [1]."),
    ("See [the table](x) and [S2].", "See [the table](x) and [1]."),
])
def test_model_marker_variants_are_normalised_and_renumbered(raw, expected):
    assert rewrite(raw)[0] == expected


@pytest.mark.parametrize(("raw", "expected"), [
    ("The fee is set out in Annex [3] [S1].", "The fee is set out in Annex 〔3〕 [1]."),
    ("As note [12] says, meals are 45 EUR [S2].", "As note 〔12〕 says, meals are 45 EUR [1]."),
    ("【1】总则规定如下[S1]。", "〔1〕总则规定如下[1]。"),
    ("Steps [1-2] come first [S3].", "Steps 〔1-2〕 come first [1]."),
    ("Footnote [^4] applies.", "Footnote 〔^4〕 applies."),
])
def test_bracketed_numbers_written_by_the_model_are_text_not_citations(raw, expected):
    text, order = rewrite(raw)
    assert text == expected
    assert len(order) == 1 or "[S" not in raw


@pytest.mark.parametrize("pieces", [1, 3, 7, 40])
def test_markers_split_across_stream_deltas(pieces):
    raw = "出差伙食补助每天一百元【S2】。住宿按城市分级[S3, S1]，见附件[3]。"
    assert rewrite(raw, pieces=pieces) == ("出差伙食补助每天一百元[1]。住宿按城市分级[2][3]，见附件〔3〕。", [2, 3, 1])


def test_an_unclosed_bracket_is_released_at_the_end():
    assert rewrite("Totals [see below")[0] == "Totals [see below"


def test_document_look_alikes_are_neutralised_and_old_markers_stripped():
    assert neutralise("see Annex [3], 【1】 and [1-2]; [S2] [Source 1]") == "see Annex 〔3〕, 〔1〕 and 〔1-2〕; 〔S2〕 〔Source 1〕"
    assert neutralise("a [b] stays, 〔3〕 stays") == "a [b] stays, 〔3〕 stays"
    assert strip_canonical("每人每天一百元[1]。出发当天五十元 [2][3]。") == "每人每天一百元。出发当天五十元。"


def test_unmarked_sentence_is_aligned_to_the_source_that_covers_it():
    sources = [chunk(1, "Hotels are reimbursed up to 150 EUR per night."),
               chunk(2, "The daily meal allowance is 45 EUR for a full travel day.")]
    text, order = rewrite("Hotels cost up to 150 EUR per night [S1]. The daily meal allowance is 45 EUR for a full travel day.", 2)
    check = finalize(text, sources, order)
    assert check.text == ("Hotels cost up to 150 EUR per night [1]. "
                          "The daily meal allowance is 45 EUR for a full travel day[2].")
    assert check.aligned == 1 and check.uncited == []
    assert [c.chunk.id for c in check.citations] == ["c1", "c2"]
    assert [s.outcome for s in check.sentences] == ["supported", "cited by alignment"]


def test_unsupported_sentence_is_flagged_and_refusal_sentence_is_not():
    sources = [chunk(1, "The daily meal allowance is 45 EUR.")]
    refusal = "The knowledge base does not contain the answer."
    text, order = rewrite("The meal allowance is 45 EUR [S1]. Alcohol is always reimbursed in full at every dinner. "
                          + refusal, 1)
    check = finalize(text, sources, order, refusal=refusal)
    assert check.uncited == ["Alcohol is always reimbursed in full at every dinner."]


def test_a_marker_naming_the_wrong_passage_moves_to_the_passage_that_supports_the_sentence():
    sources = [chunk(1, "Hotels are reimbursed up to 150 EUR per night in most cities.", section=("Hotels",)),
               chunk(2, "The daily meal allowance is 45 EUR for a full travel day.")]
    text, order = rewrite("The daily meal allowance is 45 EUR [S1]. Hotels are paid up to 150 EUR per night [S1].", 2)
    check = finalize(text, sources, order, scorer=SupportScorer())
    assert check.text == "The daily meal allowance is 45 EUR [1]. Hotels are paid up to 150 EUR per night [2]."
    assert [c.chunk.id for c in check.citations] == ["c2", "c1"], "footnote [1] is now the meal passage"
    first, second = check.sentences
    assert first.outcome == "moved" and first.written == [1] and first.markers == [1]
    assert first.support[1] >= 0.6 and second.outcome == "supported" and second.support[2] >= 0.6
    assert check.moved == 1 and check.uncited == []


def test_a_marker_no_passage_supports_is_removed_and_the_sentence_flagged():
    sources = [chunk(1, "The daily meal allowance is 45 EUR."), chunk(2, "Hotels cost up to 150 EUR per night.")]
    text, order = rewrite("Meals are 45 EUR a day [S1]. Employees may also claim golf club memberships [S2].", 2)
    check = finalize(text, sources, order)
    assert check.text == "Meals are 45 EUR a day [1]. Employees may also claim golf club memberships."
    assert [c.chunk.id for c in check.citations] == ["c1"]
    flagged = check.sentences[1]
    assert flagged.flagged and flagged.markers == [] and flagged.written == [2] and flagged.best < 0.25
    assert check.uncited == ["Employees may also claim golf club memberships."]


def test_a_number_the_passage_does_not_state_is_not_supported():
    sources = [chunk(1, "Employees receive 26 working days of paid annual leave per year.")]
    right, _ = rewrite("Employees receive 26 working days of annual leave per year [S1].", 1)
    wrong, _ = rewrite("Employees receive 30 working days of annual leave per year [S1].", 1)
    assert finalize(right, sources, [1]).sentences[0].support[1] > finalize(wrong, sources, [1]).sentences[0].best


def test_an_extra_marker_that_adds_nothing_is_dropped_from_a_supported_sentence():
    sources = [chunk(1, "Passwords must be at least 14 characters long."),
               chunk(2, "The canteen opens at noon.", section=("Canteen",))]
    text, order = rewrite("Passwords must be at least 14 characters long [S1][S2].", 2)
    check = finalize(text, sources, order)
    assert check.text == "Passwords must be at least 14 characters long [1]."
    assert [c.chunk.id for c in check.citations] == ["c1"]


def test_marker_after_the_full_stop_belongs_to_its_sentence():
    sources = [chunk(1, "每人每天一百元。"), chunk(2, "出发和返回当天各按五十元计算。")]
    text, order = rewrite("伙食补助标准为每人每天一百元。[S1]出发和返回当天各按五十元计算。[S2]", 2)
    check = finalize(text, sources, order)
    assert check.uncited == [] and check.aligned == 0 and len(check.citations) == 2


def test_quotes_are_reported_as_quotes_with_full_support():
    sources = [chunk(1, "每人每天一百元。")]
    text, order = rewrite("摘录：\n> 每人每天一百元。 [S1]", 1)
    check = finalize(text, sources, order, check_sentences=False)
    assert [(s.outcome, s.markers, s.support) for s in check.sentences] == [("no claim", [], {}), ("quote", [1], {1: 1.0})]


def test_footnote_comes_from_metadata():
    single = chunk(1, "x", page=3)
    assert finalize("Meals [1].", [single], [1]).citations[0].footnote == "[1] Travel Policy › Meals, p. 3 · v2026-11-02"
    spread = Chunk(**{**single.__dict__, "page": 3, "page_end": 4, "heading_path": ()})
    assert finalize("Meals [1].", [spread], [1]).citations[0].location == "Travel Policy, pp. 3–4 · v2026-11-02"


def test_a_sentence_in_another_language_than_its_passage_keeps_its_marker_unless_clearly_unrelated():
    sources = [chunk(1, "Passwords must be at least 14 characters long."), chunk(2, "The canteen opens at noon.")]
    cosine = {"c1": 0.83, "c2": 0.9}  # a same-topic passage in the sentence's own language may score higher

    def semantic(sentence, passages):
        return [0.5 if "高尔夫" in sentence else cosine[p.id] for p in passages]

    text, order = rewrite("密码长度至少为十四个字符[S1]。员工可以报销高尔夫球会员费[S2]。", 2)
    check = finalize(text, sources, order, scorer=SupportScorer(semantic=semantic))
    kept, unrelated = check.sentences
    assert kept.outcome == "unchecked" and kept.method == "semantic" and kept.support == {1: 0.83}
    assert unrelated.flagged and check.text == "密码长度至少为十四个字符[1]。员工可以报销高尔夫球会员费。"


@pytest.mark.parametrize(("answer", "outcome"), [
    ("Hotels are reimbursed up to 700 EUR per night [S1].", "flagged"),
    ("Hotels are reimbursed up to 150 EUR per night, 220 EUR in London [S1][S2].", "supported"),
    ("1. Hotels are reimbursed up to 150 EUR per night [S1].", "supported"),
    ("Hotels are reimbursed up to 150 EUR per night, see Annex [3] [S1].", "supported"),
    ("Hotel: 700 EUR [S1].", "flagged"),  # too short to weigh its words, not too short for a wrong number
])
def test_a_number_no_cited_passage_states_makes_the_sentence_unsupported(answer, outcome):
    sources = [chunk(1, "Hotels are reimbursed up to 150 EUR per night in most cities.", section=("Hotels",)),
               chunk(2, "In London hotels are reimbursed up to 220 EUR per night.", section=("Hotels",))]
    text, order = rewrite(answer, 2)
    check = finalize(text, sources, order, unsupported_note=" (not found in the sources)")
    assert [s.outcome for s in check.sentences][-1] == outcome
    if outcome == "flagged":
        assert "[1]" not in check.text and check.text.endswith(" (not found in the sources).")


def test_numbers_compare_across_scripts():
    sources = [chunk(1, "陪产假十五天，产假一百五十八天。", title="年假与请假制度", section=("请假",))]
    right, order = rewrite("Paternity leave is 15 days and maternity leave 158 days [S1].", 1)
    wrong, _ = rewrite("Paternity leave is 15 days and maternity leave 168 days [S1].", 1)
    scorer = SupportScorer(semantic=lambda sentence, passages: [0.8] * len(passages))
    assert finalize(right, sources, order, scorer=scorer).sentences[0].outcome == "unchecked"
    flagged = finalize(wrong, sources, order, scorer=scorer).sentences[0]
    assert flagged.flagged and flagged.missing_numbers == ["168"]


def test_the_note_of_a_flagged_sentence_is_not_part_of_the_sentence_reported():
    sources = [chunk(1, "每人每天一百元。")]
    text, order = rewrite("伙食补助每人每天一百元[S1]。另有三百元购物补贴[S1]。", 1)
    check = finalize(text, sources, order, unsupported_note="（来源中未找到）")
    assert check.text == "伙食补助每人每天一百元[1]。另有三百元购物补贴（来源中未找到）。"
    assert check.uncited == ["另有三百元购物补贴。"] and check.sentences[1].missing_numbers == ["300"]


def test_a_flagged_line_of_a_table_or_code_block_keeps_its_markdown():
    sources = [chunk(1, "The daily meal allowance is 45 EUR.")]
    answer = ("| Expense | Limit |\n|---|---|\n| Golf club memberships | reimbursed in full |\n\n"
              "```\nclaim golf memberships every single month\n```\n\nGolf club memberships are reimbursed in full.")
    text, order = rewrite(answer, 1)
    check = finalize(text, sources, order, unsupported_note=" (not found in the sources)")
    assert check.text == answer.replace("in full.", "in full (not found in the sources).")
    assert len(check.uncited) == 3, "the row and the code line are still reported as unsupported"


@pytest.mark.parametrize("commit", ["e8a1d5fed230", "993f89b254c9"])
def test_a_commit_as_version_is_shown_as_it_is_whatever_it_starts_with(commit):
    chunk = Chunk(id="x", file="runbooks/deploy.md", title="Deploy", heading_path=("Rollback",), text="make rollback",
                  start=0, end=13, page=None, page_end=None, doc_version=commit, doc_date="2026-01-05")
    assert Citation(1, chunk).footnote == f"[1] Deploy › Rollback · {commit} · 2026-01-05"
    declared = Chunk(**{**chunk.__dict__, "doc_version": "3"})  # a version the document declares: v3
    assert Citation(1, declared).footnote == "[1] Deploy › Rollback · v3 · 2026-01-05"
