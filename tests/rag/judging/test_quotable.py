from rag.judging.quotable import SHORT_PARAGRAPH, quotable_units
from rag.types import Chunk


def chunk(text: str, lead: str = "") -> Chunk:
    return Chunk("c1", "f.md", "T", ("S",), text, 0, len(text), None, None, "", "", lead=lead)


def test_short_paragraphs_and_list_items_are_whole_units_and_wraps_are_joined():
    text = ("第九条 出差期间按天发放伙食补助，标准为每人\n每天一百元；出发和返回当天各按五十元计算。\n\n"
            "- Gym membership subsidy of 30 EUR\n  per month\n- Five paid learning days per year")
    units = quotable_units(chunk(text), 0)
    assert [(u.kind, u.text) for u in units] == [
        ("paragraph", "第九条 出差期间按天发放伙食补助，标准为每人每天一百元；出发和返回当天各按五十元计算。"),
        ("paragraph", "- Gym membership subsidy of 30 EUR per month"),
        ("paragraph", "- Five paid learning days per year"),
    ]
    assert text[units[1].start:units[1].end].startswith("- Gym") and text[units[1].start:units[1].end].endswith("month")


def test_a_long_paragraph_is_cut_into_full_sentences_that_know_their_successor():
    sentence = "Hotels are reimbursed up to 150 EUR per night in most cities; London is an exception. "
    text = (sentence * 3 + "Receipts are needed.").strip()
    assert len(text) > SHORT_PARAGRAPH
    units = quotable_units(chunk(text), 2, first_index=10)
    assert [u.kind for u in units] == ["sentence"] * 4 and all(u.source == 2 for u in units)
    assert units[0].text == sentence.strip(), "a semicolon does not end a sentence"
    assert [u.following for u in units] == [11, 12, 13, None]


def test_table_rows_carry_their_header_also_when_the_table_began_in_an_earlier_chunk():
    table = "| Date | Holiday |\n|---|---|\n| 2026-01-01 | New Year |\n| 2026-12-24 | Closure |"
    first = quotable_units(chunk(table), 0)
    assert [u.text for u in first] == ["| Date | Holiday |\n|---|---|\n| 2026-01-01 | New Year |",
                                      "| Date | Holiday |\n|---|---|\n| 2026-12-24 | Closure |"]
    assert first[1].matched_text == "| 2026-12-24 | Closure |" and first[1].kind == "row"
    continued = quotable_units(chunk("| 2026-12-25 | Christmas |", lead="| Date | Holiday |\n|---|---|"), 0)
    assert [u.text for u in continued] == ["| Date | Holiday |\n|---|---|\n| 2026-12-25 | Christmas |"]


def test_a_code_block_is_one_unit_fenced_also_when_the_passage_starts_inside_it_and_images_are_no_unit():
    text = "先检查版本：\n```sh\njava -version\n```\n\n![architecture](https://cdn.example.com/a.png)\n\n然后启动。"
    assert [(u.kind, u.text) for u in quotable_units(chunk(text), 0)] == [
        ("paragraph", "先检查版本："), ("code", "```sh\njava -version\n```"), ("paragraph", "然后启动。")]
    continued = chunk("java -version\n\nmvn -v\n```\n之后执行脚本。", lead="```sh")
    assert [(u.kind, u.text) for u in quotable_units(continued, 0)] == [
        ("code", "```sh\njava -version\n\nmvn -v\n```"), ("paragraph", "之后执行脚本。")]
    cut = chunk("Run:\n\n```sh\n./demo.sh start")
    assert quotable_units(cut, 0)[-1].text == "```sh\n./demo.sh start\n```", "a block the passage cuts is closed"
