import pytest

from rag.citations import MarkerRewriter, finalize
from rag.types import Chunk


def chunk(n: int, text: str, title: str = "Travel Policy", section: tuple[str, ...] = ("Meals",), page: int | None = 3) -> Chunk:
    return Chunk(id=f"c{n}", file=f"f{n}.md", title=title, heading_path=section, text=text, start=0, end=len(text),
                 page=page, page_end=page, doc_version="2026-11-02", doc_date="2026-11-02")


def rewrite(text: str, sources: int = 3, pieces: int = 1) -> tuple[str, list[int]]:
    rw = MarkerRewriter(sources)
    step = max(1, len(text) // pieces)
    out = "".join(rw.feed(text[i:i + step]) for i in range(0, len(text), step)) + rw.flush()
    return out, rw.order


@pytest.mark.parametrize(("raw", "expected"), [
    ("A [2]. B [1][3].", "A [1]. B [2][3]."),
    ("A [2, 3].", "A [1][2]."),
    ("A【2】。B［3］。", "A[1]。B[2]。"),
    ("A [^3].", "A [1]."),
    ("A [1-3].", "A [1][2][3]."),
    ("A [Source 2] and [来源：3].", "A [1] and [2]."),
    ("A [7]. B [0]. C [2].", "A . B . C [1]."),
    ("A [2][2] B [2].", "A [1] B [1]."),
    ("See [the table](x) and [2].", "See [the table](x) and [1]."),
])
def test_marker_variants_are_normalised_and_renumbered(raw, expected):
    assert rewrite(raw)[0] == expected


@pytest.mark.parametrize("pieces", [1, 3, 7, 40])
def test_markers_split_across_stream_deltas(pieces):
    raw = "出差伙食补助每天一百元【2】。住宿按城市分级[3, 1]。"
    assert rewrite(raw, pieces=pieces) == ("出差伙食补助每天一百元[1]。住宿按城市分级[2][3]。", [2, 3, 1])


def test_an_unclosed_bracket_is_released_at_the_end():
    assert rewrite("Totals [see below")[0] == "Totals [see below"


def test_unmarked_sentence_is_aligned_to_the_source_that_covers_it():
    sources = [chunk(1, "Hotels are reimbursed up to 150 EUR per night."),
               chunk(2, "The daily meal allowance is 45 EUR for a full travel day.")]
    text, order = rewrite("Hotels cost up to 150 EUR per night [1]. The daily meal allowance is 45 EUR for a full travel day.", 2)
    check = finalize(text, sources, order)
    assert check.text == ("Hotels cost up to 150 EUR per night [1]. "
                          "The daily meal allowance is 45 EUR for a full travel day[2].")
    assert check.aligned == 1 and check.uncited == []
    assert [c.chunk.id for c in check.citations] == ["c1", "c2"]


def test_unsupported_sentence_is_flagged_and_refusal_sentence_is_not():
    sources = [chunk(1, "The daily meal allowance is 45 EUR.")]
    refusal = "The knowledge base does not contain the answer."
    text, order = rewrite("The meal allowance is 45 EUR [1]. Alcohol is always reimbursed in full at every dinner. "
                          + refusal, 1)
    check = finalize(text, sources, order, refusal=refusal)
    assert check.uncited == ["Alcohol is always reimbursed in full at every dinner."]


def test_marker_after_the_full_stop_belongs_to_its_sentence():
    sources = [chunk(1, "每人每天一百元。"), chunk(2, "出发和返回当天各按五十元计算。")]
    text, order = rewrite("伙食补助标准为每人每天一百元。[1]出发和返回当天各按五十元计算。[2]", 2)
    check = finalize(text, sources, order)
    assert check.uncited == [] and check.aligned == 0 and len(check.citations) == 2


def test_footnote_comes_from_metadata():
    single = chunk(1, "x", page=3)
    assert finalize("Meals [1].", [single], [1]).citations[0].footnote == "[1] Travel Policy › Meals, p. 3 · v2026-11-02"
    spread = Chunk(**{**single.__dict__, "page": 3, "page_end": 4, "heading_path": ()})
    assert finalize("Meals [1].", [spread], [1]).citations[0].location == "Travel Policy, pp. 3–4 · v2026-11-02"
