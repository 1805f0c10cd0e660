"""What a chat message asks, without the courtesies people wrap a question in: a greeting ("Hey team,",
"你好，"), a preamble ("quick question -", "does anyone know", "请问", "麻烦问下") and thanks at the end
("thanks!", "谢谢"). None of it is what the asker wants found: searched for, "quick question" pulls in the
passage that says "questions", and the near-miss check read 你好 and "Hey" as words the knowledge base does
not mention ("知识库中没有提到“你好”"). The message itself is kept where nothing but courtesy is left ("hi!").

Only whole courtesies at either end are taken off — a greeting followed by a separator or the question, a
preamble followed by a separator or the indirect question it opens ("does anyone know how …"), thanks after
the question — and only while something of the question remains.
"""

from __future__ import annotations

import re

# Who a greeting or thanks may name: "hi all", "thanks everyone", "大家好".
_WHOM = (r"(?:all|everyone|everybody|team|there|folks|guys|people|y'?all|colleagues|friends|bot"
         r"|zusammen|alle|tout le monde|à tous|a todos|a todas|pessoal|a tutti|<@[\w.-]+>)")
_ADDRESSEE = rf"(?:\s+{_WHOM})?"
_SEPARATOR = r"[\s,，、!！.。:：;；~～\-–—…]"
_PUNCTUATION = r"[,，、!！.。:：;；~～\-–—…]"
# Greetings and thanks in the Latin-script languages, by language: greetings are taken off before a separator
# or the question, thanks at the end; either tells the language of a message too short for language
# identification ("Danke!" reads as English to it). Each is a regular expression (lower case).
_COURTESIES: dict[str, tuple[str, str]] = {
    "en": ((r"hi|hello|hey|heya|hiya|howdy|greetings|dear\s+(?:all|team|colleagues|hr|it)"
            r"|good\s+(?:morning|afternoon|evening|day)"),
           (r"(?:many\s+)?thanks|thank\s+you|thx|tia|ty|cheers|much\s+appreciated|appreciate\s+it"
            r"|appreciated")),
    "de": (r"hallo|guten\s+(?:morgen|tag|abend)|moin|servus",
           r"danke(?:\s+(?:schön|sehr|euch|im\s+voraus))?|vielen\s+dank(?:\s+im\s+voraus)?"),
    "fr": (r"bonjour|bonsoir|salut|coucou", r"merci(?:\s+(?:beaucoup|d'avance))?"),
    "es": (r"hola|buen[oa]s\s+(?:días|dias|tardes|noches)", r"(?:muchas\s+)?gracias(?:\s+de\s+antemano)?"),
    "pt": (r"olá|bom\s+dia|boa\s+(?:tarde|noite)", r"(?:muito\s+)?obrigad[oa]"),
    "it": (r"ciao|buongiorno|buonasera|salve", r"grazie(?:\s+(?:mille|in\s+anticipo))?"),
}
_GREETINGS = "|".join(greetings for greetings, _ in _COURTESIES.values())
# ... and words that greet only when punctuation or whom they greet follows ("Morning shift pay?" asks).
_SOFT_GREETINGS = r"morning|afternoon|evening|yo|oi|liebe\s+(?:kollegen|kolleginnen|alle)|chers\s+collègues"
# Preambles: a sentence that announces a question rather than asking it.
_PREAMBLES = (
    r"(?:a\s+|one\s+)?(?:quick|small|short|simple|silly|stupid|dumb|basic|random|general|newbie|noob)\s+"
    r"(?:question|q)(?:\s+for\s+(?:you|you\s+all|everyone|the\s+team))?"
    r"|(?:i\s+have|i've\s+got|i\s+got|got)\s+a\s+(?:quick\s+|small\s+)?question(?:\s+for\s+you(?:\s+all)?)?"
    r"|sorry\s+(?:to\s+(?:bother|trouble|disturb|pester)\s+(?:you|everyone|you\s+all|y'all)(?:\s+again)?"
    r"|(?:for|if\s+this\s+is)\s+(?:a|the)\s+(?:dumb|silly|stupid|basic|noob|newbie)\s+question)"
    r"|i'?m\s+new\s+here|i\s+am\s+new\s+here|question|q"
)
# ... that open the question they announce ("does anyone know how many days we get?").
_OPENERS = (
    r"(?:does|do)\s+(?:anyone|anybody|someone|somebody|any\s+of\s+you|you\s+guys|you)\s+know"
    r"(?:\s+(?:if|whether))?"
    r"|(?:anyone|anybody)\s+know(?:s)?(?:\s+(?:if|whether))?"
    r"|(?:can|could|would)\s+(?:anyone|anybody|someone|somebody|you)(?:\s+please)?\s+"
    r"(?:tell\s+me|let\s+me\s+know|remind\s+me)(?:\s+(?:if|whether))?"
    r"|(?:i\s+was\s+|i'm\s+|just\s+)?wondering(?:\s+(?:if|whether))?"
)
_ZH_LEADING = (
    r"你好|您好|大家好|各位好|各位同事好|同事们好|各位老师好|老师好|早上好|上午好|中午好|下午好|晚上好|早安"
    r"|嗨|哈喽|哈啰|在吗|打扰(?:一下|了|大家了|各位了)?|不好意思(?:打扰(?:一下)?)?"
    r"|麻烦(?:问(?:一)?下|请教(?:一)?下|大家|各位|一下)?|我?想?请问(?:一下)?|我?想问(?:一)?下|我?想请教(?:一)?下"
    r"|请教(?:一)?下|问(?:一)?下|咨询(?:一)?下|有(?:人|谁)知道|谁知道|求助|小白求问"
    r"|こんにちは|おはようございます|お疲れ様です|お疲れさまです|すみません|안녕하세요|수고하십니다"
)
_ZH_SOFT = r"各位|大家|同事们"
_THANKS = "|".join(thanks for _, thanks in _COURTESIES.values())
_THANKS_TAIL = r"(?:\s+(?:so\s+much|a\s+lot|in\s+advance|again|all|everyone|team|guys|folks|very\s+much))*"
_ZH_THANKS = (
    r"(?:提前|先)?(?:谢谢|多谢|感谢|谢了|谢啦)(?:大家|各位|啦|了|您|你|哈)?|辛苦(?:了|啦)|麻烦了|拜托了"
    r"|ありがとうございます|よろしくお願いします|よろしくお願いいたします|감사합니다|고맙습니다"
)
_EMOJI = r"(?::\)|:-\)|:D|\(:|🙏|🙂|😊|😀|😄|👍|:[a-z_+-]+:)"

_LEADING = re.compile(
    rf"^\s*(?:(?:{_GREETINGS}){_ADDRESSEE}(?:{_SEPARATOR}+|\s+(?=\S)|$)"
    rf"|(?:{_SOFT_GREETINGS})(?:\s+{_WHOM}{_SEPARATOR}+|\s*{_PUNCTUATION}{_SEPARATOR}*)"
    rf"|(?:{_PREAMBLES}){_SEPARATOR}*[,，:：!！.。\-–—]{_SEPARATOR}*"
    rf"|(?:{_OPENERS})(?:{_SEPARATOR}+|\s+(?=\S))"
    rf"|(?:{_ZH_LEADING}){_SEPARATOR}*"
    rf"|(?:{_ZH_SOFT}){_SEPARATOR}+)",
    re.IGNORECASE,
)
_TRAILING = re.compile(
    rf"(?:(?<=[\s?？!！.。,，;；:：~～\-–—)])(?:{_THANKS}){_THANKS_TAIL}|(?:{_ZH_THANKS})|{_EMOJI})"
    rf"{_SEPARATOR}*$",
    re.IGNORECASE,
)
_WORDISH = re.compile(r"[\w\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
# Acknowledging an answer, before thanks or alone ("ok, thanks", "great!", "好的，谢谢"): no question either.
_ACKNOWLEDGED = re.compile(
    rf"^\s*(?:ok(?:ay)?|great|perfect|cool|awesome|nice|got\s+it|understood|makes\s+sense|that\s+helps|"
    rf"好的|好|明白了?|收到|了解了?|知道了|ok了|super|parfait|d'accord|perfecto|vale|perfeito|ottimo|"
    rf"わかりました|了解です|알겠습니다){_SEPARATOR}*",
    re.IGNORECASE,
)
_THANKED = re.compile(rf"^\s*(?:(?:{_THANKS}){_THANKS_TAIL}|{_ZH_THANKS}){_SEPARATOR}*$", re.IGNORECASE)


def asked_part(message: str) -> str:
    """`message` without the greetings and preambles before its question and the thanks after it; the
    message as it is when nothing else would be left."""
    text = message.strip()
    while True:
        shorter = _LEADING.sub("", text, count=1).strip()
        shorter = _TRAILING.sub("", shorter, count=1).strip()
        if shorter == text or not _enough(shorter):
            return text
        text = shorter


def courtesy(message: str) -> str | None:
    """What a message that asks nothing says instead: "thanks" ("thanks!", "ok, thanks 🙏", "好的，谢谢") or
    "greeting" ("hi!", "你好"); None when it asks something (or is no courtesy either)."""
    text = message.strip().lstrip("¡¿")
    greeted = thanked = False
    while text:
        shorter = _TRAILING.sub("", text, count=1).strip()
        if shorter != text:
            thanked, text = True, shorter
            continue
        shorter = _LEADING.sub("", text, count=1).strip()
        if shorter == text:
            shorter = _ACKNOWLEDGED.sub("", text, count=1).strip()
            thanked = thanked or shorter != text
        if shorter == text:
            break
        greeted, text = greeted or not thanked, shorter
    if _THANKED.match(text):
        return "thanks"
    if _WORDISH.search(text):
        return None
    return "thanks" if thanked else "greeting" if greeted else None


# Each language's courtesies as whole words, except English's (language identification reads those itself).
_COURTESY_LANGUAGE = {language: re.compile(rf"(?<!\w)(?:{greetings}|{thanks})(?!\w)", re.IGNORECASE)
                      for language, (greetings, thanks) in _COURTESIES.items() if language != "en"}


def courtesy_language(message: str) -> str | None:
    """The language a greeting or thanks in another Latin-script language than English is written in, by its
    courtesy words ("Danke!": German); None when none of them is there."""
    return next((language for language, said in _COURTESY_LANGUAGE.items() if said.search(message)), None)


def _enough(text: str) -> bool:
    """Whether what is left can still be a question: two characters of words at least."""
    return len(_WORDISH.findall(text)) >= 2


__all__ = ["asked_part", "courtesy", "courtesy_language"]
