"""The question a chat message asks, without the courtesies around it (rag.answering.framing)."""

from __future__ import annotations

import pytest

from rag.answering.framing import asked_part, courtesy, courtesy_language


@pytest.mark.parametrize("message, asked", [
    ("hi! quick question - how many vacation days do we get?", "how many vacation days do we get?"),
    ("Hey team, Where can I leave my bike?", "Where can I leave my bike?"),
    ("Where can I leave my bike? thanks!", "Where can I leave my bike?"),
    ("Hello, does anyone know: What is the guest Wi-Fi password?", "What is the guest Wi-Fi password?"),
    ("Morning all. How long is probation? Thanks in advance", "How long is probation?"),
    ("Sorry to bother you, I lost my work computer, who do I tell?",
     "I lost my work computer, who do I tell?"),
    ("hi there, Can I fly business class? cheers", "Can I fly business class?"),
    ("Can someone tell me how many days of leave I get?", "how many days of leave I get?"),
    ("Dear all, when are expenses paid?", "when are expenses paid?"),
    ("how long is probation thx", "how long is probation"),
    ("Is there a fitness allowance? 🙏", "Is there a fitness allowance?"),
    ("what's the per diem :pray:", "what's the per diem"),
    ("你好，请问住酒店一晚最多报多少", "住酒店一晚最多报多少"),
    ("住宾馆一晚能报多少钱谢谢！", "住宾馆一晚能报多少钱"),
    ("大家好，想问一下：出差吃饭能报多少?", "出差吃饭能报多少?"),
    ("麻烦问下，请客户吃饭人均能花多少？谢谢", "请客户吃饭人均能花多少？"),
    ("hi，VPN 密码多久换一次", "VPN 密码多久换一次"),
    ("您好！新员工第一天要做什么？", "新员工第一天要做什么？"),
    ("Hallo zusammen, wie viele Urlaubstage habe ich? Danke!", "wie viele Urlaubstage habe ich?"),
    ("Bonjour, combien de jours de congés ? Merci d'avance", "combien de jours de congés ?"),
    ("こんにちは。年次休暇は何日もらえますか？", "年次休暇は何日もらえますか？"),
    ("안녕하세요, 연차 휴가는 며칠인가요? 감사합니다", "연차 휴가는 며칠인가요?"),
])
def test_greetings_preambles_and_thanks_are_taken_off(message, asked):
    assert asked_part(message) == asked


@pytest.mark.parametrize("message", [
    "Morning shift pay?",  # "Morning" greets only before punctuation or whom it greets
    "Evening allowance?",
    "hiking allowance?",  # "hi" only as a word of its own
    "How do I say thank you?",  # thanks inside the question
    "大家都有年假吗",  # 大家 is the subject here, no greeting
    "What is the guest Wi-Fi password?",
])
def test_a_question_without_courtesies_is_left_as_it_is(message):
    assert asked_part(message) == message


@pytest.mark.parametrize("message", ["hi!", "thanks!", "谢谢", "你好", "hey"])
def test_a_message_of_courtesy_alone_is_kept_whole(message):
    """Nothing would be left to ask: the message stands as written (and is answered as it is)."""
    assert asked_part(message) == message


@pytest.mark.parametrize("message, kind", [
    ("thanks!", "thanks"), ("great, thanks! 🙏", "thanks"), ("ok thanks", "thanks"),
    ("Hey, thanks!", "thanks"),
    ("好的，谢谢", "thanks"), ("收到，谢谢！", "thanks"), ("Danke!", "thanks"), ("ありがとうございます", "thanks"),
    ("👍", "thanks"), ("hi!", "greeting"), ("Hello there", "greeting"), ("你好", "greeting"),
    ("Good morning!", "greeting"), ("안녕하세요", "greeting"),
])
def test_a_message_that_only_thanks_or_greets_says_so(message, kind):
    assert courtesy(message) == kind


@pytest.mark.parametrize("message", [
    "thanks, but what about Lisbon?", "OK, and for managers?", "hi, how many days?",
    "how long is probation thx",
    "谢谢，那病假呢？", "What is MFA?",
])
def test_a_message_that_asks_something_is_no_courtesy(message):
    assert courtesy(message) is None


@pytest.mark.parametrize("message, language", [
    ("Danke!", "de"), ("Hallo zusammen", "de"), ("merci beaucoup", "fr"), ("¡Gracias!", "es"),
    ("obrigado", "pt"), ("grazie mille", "it"), ("thanks!", None), ("谢谢", None),
])
def test_the_language_of_a_short_courtesy_is_told_by_its_words(message, language):
    """Too short for language identification ("Danke!" reads as English to it): its courtesy words tell."""
    assert courtesy_language(message) == language
    assert courtesy(message) is not None
