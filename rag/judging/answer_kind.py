"""What kind of answer a question asks for — an amount, a time of day, a year, a span of time, a date, or
code — and whether a sentence can give it.

The embedded model reads "What time does the building close?" as close to a row of the holiday table
("Office closed") as to "The offices are open from 7:00 to 21:00", and "How many days of leave?" as close
to a sentence about leave that states no number as to the one that does. Of the sentences that match a
question nearly as well as the best one, a sentence that can give the kind of answer asked for leads.
A sentence that cannot give an amount is still quoted when no other comes close; but a quote that states no
year or time of day to a question asking one answers nothing, and the extractive answer is a refusal instead
(`unstated_kind`). A span of time ("VPN 密码多久换一次") is no amount: "at least 14 characters long" states a
number, and "do not expire on a schedule" answers. A date leads among the excerpts chosen (`giving_first`).
An answer model reads the passages itself and is told to refuse what they do not answer.

Per language, by its own question words; a question in a language not listed here asks no kind.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

from rag.judging import calibration
from rag.judging.negation import AS_CLOSE, led_if_close
from rag.words.numbers import stated_numbers

T = TypeVar("T")

# A unit giving the kind of answer asked leads when it scores this close to the best: the units of one passage
# score within a few hundredths of one another, and "how much … per day" is answered by the "$10/day" one
# (rag/judging/calibration.json, `kind_close`: chosen on the two choosing corpora, reported held out)
KIND_CLOSE = calibration.default().quotes.kind_close

AMOUNT, TIME, YEAR, SPAN, DATE = "amount", "time of day", "year", "span of time", "date"

# The question words of each kind, per language (lower case; matched at word starts, so "how many" and
# "wie viele" but not "somehow many"). Chinese: inside longer words.
_ASKING = {
    TIME: {
        "en": r"what time|at what time|what hour",
        "de": r"um wie ?viel uhr|wie ?viel uhr|welche uhrzeit|um welche uhrzeit",
        "fr": r"à quelle heure|quelle heure",
        "es": r"a qué hora|qué hora",
        "it": r"a che ora|che ora|a che ore",
        "pt": r"a que horas|que horas",
        "zh": r"几点|几时|什么时间点",
    },
    YEAR: {
        "en": r"what year|which year|in what year|in which year|what decade|which decade|what century"
              r"|which century",
        "de": r"welche[ms]? jahr|welche[mn]? jahrzehnt|welche[ms]? jahrhundert",
        "fr": r"quelle année|en quelle année|quel siècle",
        "es": r"qué año|en qué año|cuál año|qué siglo",
        "it": r"che anno|quale anno|in che anno|quale secolo",
        "pt": r"que ano|qual ano|em que ano|que século",
        "zh": r"哪一?年|何年|哪个年代|哪一?个?世纪",
    },
    DATE: {
        "en": r"what date|which date|on what date|what day|which day|on which day|on what day",
        "de": r"welche[mns]? datum|an welchem tag|welche[nmr]? tag",
        "fr": r"quelle date|quel jour",
        "es": r"qué fecha|qué día|cuál fecha|cuál día",
        "it": r"che data|quale data|che giorno|quale giorno",
        "pt": r"que data|qual data|que dia|qual dia",
        # (几号 of a building, line, gate or room is a number: 几号楼, 几号线, 几号门, 几号会议室)
        "zh": r"哪天|哪一天|哪日|哪一日|几号(?![楼线门口房馆厅车座窗柜位会])|几月几[日号]|什么日子|什么日期|哪个日期",
    },
    # How often, how long in time (English "how long" and Chinese 多长 also ask a length: an amount)
    SPAN: {
        "en": r"how often|how frequently",
        "de": r"wie oft|wie häufig",
        "fr": r"à quelle fréquence|tous les combien",
        "es": r"con qué frecuencia|cada cuánto",
        "it": r"ogni quanto|con quale frequenza",
        "pt": r"com que frequência|de quanto em quanto",
        "zh": r"多久|多长时间|多少时间|多频繁",
    },
    AMOUNT: {
        "en": r"how many|how much|how long|how old|how far|how big|how large|how high|how tall|how deep"
              r"|how wide|how heavy|what percentage|what percent|what proportion|what share|what fraction"
              r"|what amount|what number of",
        "de": r"wie ?viele?|wie lange|wie alt|wie weit|wie groß|wie hoch|wie tief|wie schwer|wie breit"
              r"|welche[rn]? betrag|wie hohe?",
        "fr": r"combien",
        "es": r"cuánt[oa]s?",
        "it": r"quant[oaie]",
        "pt": r"quant[oa]s?",
        "zh": r"多少|几(?!乎)|多长|多大|多高|多远|多重|多深|多宽|百分之几",
    },
}
_KINDS = {kind: {lang: re.compile(rf"(?:^|(?<=\W)){words}" if lang != "zh" else words, re.IGNORECASE)
                 for lang, words in per_language.items()}
          for kind, per_language in _ASKING.items()}

# Numbers written as words (lower case), by which a sentence states an amount without digits ("one" only where
# it is no article as well).
_NUMBER_WORDS = {
    "en": "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred "
          "hundreds "
          "thousand thousands million millions billion billions trillion dozen dozens half twice thrice "
          "double triple quarter percent",
    "de": "eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf zwanzig "
          "dreißig hundert tausend million millionen milliarde milliarden dutzend halb halbe doppelt prozent",
    "fr": "deux trois quatre cinq six sept huit neuf dix onze douze vingt trente quarante cinquante "
          "cent cents mille million millions milliard milliards douzaine demi demie double",
    "es": "dos tres cuatro cinco seis siete ocho nueve diez once doce veinte treinta cuarenta "
          "cincuenta cien ciento mil millón millones docena medio media doble",
    "it": "due tre quattro cinque sei sette otto nove dieci undici dodici venti trenta quaranta "
          "cinquanta cento mille milione milioni miliardo dozzina mezzo mezza doppio",
    "pt": "dois duas três quatro cinco seis sete oito nove dez onze doze vinte trinta quarenta "
          "cinquenta cem cento mil milhão milhões dúzia meio meia dobro",
}
_NUMBER_WORD = {lang: set(text.split()) for lang, text in _NUMBER_WORDS.items()}
_WORD = re.compile(r"[^\W\d_]+")
_CLOCK = re.compile(r"(?<![\d.:])\d{1,2}[:h]\d{2}(?![\d.:])"
                    r"|\b\d{1,2}(?:[.:]\d{2})? ?(?:a\.?m\.?|p\.?m\.?|uhr|h|o'clock)(?!\w)"
                    r"|[\d零一二三四五六七八九十两]+(?:点|时)|中午|午夜|凌晨|早上|上午|下午|晚上", re.IGNORECASE)
# The times and parts of the day named in words, per language: a part of the day answers "what time" too
# ("they gathered at night"). Per language, because one language's word is another's verb (Italian "sera",
# evening, is French "will be").
_DAY_PARTS = {
    "en": r"noon|midnight|midday|mornings?|afternoons?|evenings?|nights?|night-?time|daytime|dawn|dusk"
          r"|sunrise|sunset",
    "de": r"mittags?|mitternacht|morgens|vormittags|nachmittags|abends|nachts",
    "fr": r"midi|minuit|matin|matinée|après-midi|soir|soirée|nuit",
    "es": r"mediodía|medianoche|noche|madrugada",
    "it": r"mezzogiorno|mezzanotte|mattin[ao]|pomeriggio|sera|notte",
    "pt": r"meio-dia|meia-noite|manhã|noite",
}
_DAY_PART = {lang: re.compile(rf"\b(?:{words})\b", re.IGNORECASE) for lang, words in _DAY_PARTS.items()}
# A sentence in a language not listed: any listed word
_ANY_DAY_PART = re.compile(rf"\b(?:{'|'.join(_DAY_PARTS.values())})\b", re.IGNORECASE)
# A span of time or how often: a unit of time, or a word of frequency or schedule ("Passwords do not expire
# on a schedule" answers "VPN 密码多久换一次", "at least 14 characters long" does not). German writes its units
# inside compounds (Arbeitstage); Chinese with a number or 每 before them (年 alone is also 年假's).
_SPANS = {
    "en": r"\b(?:seconds?|minutes?|hours?|days?|weeks?|fortnights?|months?|quarters?|years?|decades?"
          r"|centur(?:y|ies)|hourly|daily|weekly|monthly|quarterly|yearly|annually|schedule[ds]?|once|twice"
          r"|regularly|periodically)\b",
    "de": r"sekunde|minute|stunde|tag|woche|monat|quartal|jahr|jährlich|täglich|regelmäßig|einmal|zweimal",
    "fr": r"\b(?:secondes?|minutes?|heures?|jours?|semaines?|mois|trimestres?|ans?|années?|quotidien\w*"
          r"|hebdomadaire\w*|mensuel\w*|annuel\w*|régulièrement|fois)\b",
    "es": r"\b(?:segundos?|minutos?|horas?|días?|semanas?|mes|meses|trimestres?|años?|diari\w*|semanal\w*"
          r"|mensual\w*|anual\w*|regularmente|vez|veces)\b",
    "it": r"\b(?:secondi|secondo|minuti|minuto|ore|giorni|giorno|settimane|settimana|mesi|mese|anni|anno"
          r"|quotidian\w*|settimanal\w*|mensil\w*|annual\w*|regolarmente|volta|volte)\b",
    "pt": r"\b(?:segundos?|minutos?|horas?|dias?|semanas?|mês|meses|trimestres?|anos?|diári\w*|semana\w*"
          r"|mensa\w*|anua\w*|regularmente|vez|vezes)\b",
    "zh": r"[\d零一二三四五六七八九十百千两半几]+个?(?:工作|自然|整)?(?:秒|分钟|小时|天|日|周|星期|月|年|季度)"
          r"|每(?:天|日|周|星期|月|年|季度|次)|定期|随时|期限|有效期",
}
_SPAN = {lang: re.compile(words, re.IGNORECASE) for lang, words in _SPANS.items()}
# A date: written in digits, or a month or weekday named (any of the listed languages'), or 月…日 in Chinese
_MONTHS = ("january february april june july august september october november december jan feb apr jun "
           "jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday januar "
           "februar märz mai juni juli oktober dezember montag dienstag mittwoch donnerstag freitag "
           "samstag sonntag janvier février mars avril juin juillet août septembre octobre novembre "
           "décembre lundi mardi mercredi jeudi vendredi samedi dimanche enero febrero marzo abril mayo "
           "junio julio agosto septiembre octubre noviembre diciembre lunes martes miércoles jueves "
           "viernes sábado domingo gennaio febbraio aprile maggio giugno luglio settembre ottobre dicembre "
           "lunedì martedì mercoledì giovedì venerdì sabato domenica janeiro fevereiro março maio junho "
           "julho setembro outubro novembro dezembro")
# ("May" and "March" are English words too: months only beside a day's number)
_NAMED = "|".join(sorted(set(_MONTHS.split()), key=len, reverse=True))
_DATE = re.compile(r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}[./]\d{1,2}[./]\d{2,4}\b"
                   r"|\b\d{1,2}(?:st|nd|rd|th)? (?:may|march)\b|\b(?:may|march) \d{1,2}\b"
                   rf"|\b(?:{_NAMED})\b|[\d〇零一二三四五六七八九十]+月[\d〇零一二三四五六七八九十]+[日号]"
                   r"|(?:星期|周|礼拜)[一二三四五六日天]", re.IGNORECASE)
_YEAR = re.compile(r"\b(?:1\d{3}|20\d{2})s?\b|\b\d{1,2}(?:st|nd|rd|th) century\b|\bcentur(?:y|ies)\b"
                   r"|\bdecades?\b|[\d〇零一二三四五六七八九]{2,4}年|世纪|年代", re.IGNORECASE)


# Asking for code: a question naming a command, a script, a configuration file or its syntax, an environment
# variable, a dependency, or a format code is written in. Only such a question is answered by a code block;
# any other is answered in prose ("Which Java version does the client need?" by "Java 1.8+", never by the
# block showing `java -version`). Per language (lower case; at word starts, Chinese inside words); in a
# language not listed, any of them.
_ASKING_CODE = {
    "en": r"commands?\b|command[- ]line|cli\b|scripts?\b|snippets?\b|syntax|code samples?|code examples?"
          r"|(?:sample|example) code|(?:config(?:uration)?|properties) files?|environment variables?|env vars?"
          r"|dependenc(?:y|ies)|what (?:do|should) i (?:type|run|enter|paste)",
    "de": r"befehl|skript|konfigurationsdatei|syntax|umgebungsvariable|codebeispiel|abhängigkeit",
    "fr": r"commande|script|fichier de configuration|syntaxe|variable d'environnement|exemple de code|dépendance",
    "es": r"comando|script|archivo de configuración|sintaxis|variable de entorno|ejemplo de código|dependencia",
    "it": r"comando|script|file di configurazione|sintassi|variabile d'ambiente|esempio di codice|dipendenza",
    "pt": r"comando|script|arquivo de configuração|ficheiro de configuração|sintaxe|variável de ambiente"
          r"|exemplo de código|dependência",
    "zh": r"命令|指令|脚本|代码|写法|怎么写|如何写|配置文件|配置项|配置示例|环境变量|启动参数|参数名|语法|依赖"
          r"|properties",
    "ja": r"コマンド|スクリプト|コード|設定ファイル|構文|環境変数|依存",
    "ko": r"명령|스크립트|코드|설정 파일|구문|환경 변수|의존",
}
# ... and the formats and tools code is written in, in any language ("the YAML for …", "pom 里怎么加")
_CODE_FORMATS = r"yaml|yml|json|xml|toml|pom|gradle|maven|docker-?compose|dockerfile|sql|bash|powershell|kubectl"
_CODE_ASKED = {lang: re.compile(rf"(?:^|(?<=\W)){words}" if lang not in ("zh", "ja", "ko") else words, re.IGNORECASE)
               for lang, words in _ASKING_CODE.items()}
_ANY_CODE_ASKED = re.compile("|".join(f"(?:{words})" for words in _ASKING_CODE.values()), re.IGNORECASE)
_FORMAT_NAMED = re.compile(rf"(?<![A-Za-z0-9])(?:{_CODE_FORMATS})(?![A-Za-z0-9])", re.IGNORECASE)


def asks_for_code(question: str, language: str) -> bool:
    """Whether `question` (in `language`) asks for a command, a configuration or other code: then, and only
    then, a code block can answer it."""
    asking = _CODE_ASKED.get(language, _ANY_CODE_ASKED)
    return bool(asking.search(question) or _FORMAT_NAMED.search(question))


def asked_kind(question: str, language: str) -> str | None:
    """The kind of answer `question` (in `language`) asks for — AMOUNT, TIME, YEAR, SPAN or DATE — or None
    (any other, or more than one)."""
    kinds = {kind for kind, per_language in _KINDS.items()
             if (pattern := per_language.get(language)) is not None and pattern.search(question)}
    if kinds & {TIME, YEAR, SPAN, DATE}:  # "how many hours" asks an amount; "what time" also holds "what"
        kinds.discard(AMOUNT)
    return kinds.pop() if len(kinds) == 1 else None


def gives(sentence: str, kind: str, language: str) -> bool:
    """Whether `sentence` (in `language`) can give an answer of `kind` — or, for an amount in a language
    whose number words are not listed here, whether it states a number in digits or Chinese numerals."""
    if kind == TIME:
        return bool(_CLOCK.search(sentence) or _DAY_PART.get(language, _ANY_DAY_PART).search(sentence))
    if kind == YEAR:
        return bool(_YEAR.search(sentence))
    if kind == SPAN:
        return bool(_SPAN.get(language, _SPAN["en"]).search(sentence))
    if kind == DATE:
        return bool(_DATE.search(sentence))
    if stated_numbers(sentence):
        return True
    spelled = _NUMBER_WORD.get(language, set())
    return any(w.lower() in spelled for w in _WORD.findall(sentence))


def unstated_kind(question: str, language: str, texts: list[tuple[str, str]]) -> str | None:
    """The kind of answer `question` asks for that none of `texts` (each with its language) can give — a year
    or a time of day; None when it asks neither, or one of them gives it. Then they do not answer it, however
    close in meaning: "In what year was Huguon built?" is not answered by the sentence that tells the gate's
    legend, nor "What time does the building close?" by the holiday table's "Closed" rows. An amount is not
    judged: "free", "unlimited" or "none" answer "how much" without a number."""
    kind = asked_kind(question, language)
    if kind not in (TIME, YEAR) or not texts:
        return None
    return None if any(gives(text, kind, written) for text, written in texts) else kind


def giving_first(question: str, language: str, excerpts: list[list[T]], text: Callable[[T], str],
                 language_of: Callable[[T], str], on_topic: Callable[[T], bool]) -> list[list[T]]:
    """The excerpts chosen to quote, led by the first one that states the date `question` asks and holds a
    key word of it (`on_topic`), when the first states none ("春节放假放到哪天？": the holiday table's Spring
    Festival row, not the leave rule that scored closer). Policies date their deadlines, so a date does not
    lead among the sentences before the quotes are chosen (`kind_first`); a year or a time of day does, and
    does not here: squad2's "In what year was Louis XIII crowned?" would open with another king's 1672."""
    kind = asked_kind(question, language) if excerpts else None
    if kind != DATE:
        return excerpts

    def states(unit: T) -> bool:
        return gives(text(unit), kind, language_of(unit))

    if any(states(u) for u in excerpts[0]):
        return excerpts
    found = next((e for e in excerpts[1:] if any(states(u) and on_topic(u) for u in e)), None)
    return excerpts if found is None else [found] + [e for e in excerpts if e is not found]


def kind_first(question: str, language: str, ranked: list[T], text: Callable[[T], str],
               language_of: Callable[[T], str], score: Callable[[T], float],
               meaning: Callable[[T], float] | None = None, on_topic: Callable[[T], bool] | None = None,
               ) -> list[T]:
    """`ranked` (best first) led by the best one that can give the kind of answer `question` asks for, when it
    scores within `KIND_CLOSE` of the best; unchanged otherwise. A year or a time of day, which a sentence
    that states none cannot answer, also leads by meaning: when it holds a key word of the question
    (`on_topic`) and its `meaning` alone (the cosine) is within `AS_CLOSE` of the closest one's. The holiday
    table's "Closed" rows share "close" with "What time does the office close?" and score ahead; the opening
    hours share its meaning (.8633 against .8686) and "office"."""
    kind = asked_kind(question, language) if ranked else None
    if kind is None or kind == DATE:  # policies date their deadlines: which date answers is the excerpts'
        return ranked

    def fits(candidate: T) -> bool:
        return gives(text(candidate), kind, language_of(candidate))

    led = led_if_close(ranked, score, fits, KIND_CLOSE)
    if led is None and meaning is not None and on_topic is not None and kind in (TIME, YEAR):
        closest = max(meaning(c) for c in ranked)
        found = next((c for c in ranked if fits(c) and on_topic(c) and meaning(c) >= closest - AS_CLOSE),
                     None)
        led = None if found is None else [found] + [c for c in ranked if c is not found]
    return led or ranked
