"""The figure kinds read after money, percentages, dates and statutes (docs/decisions/0004), in English, German,
French, Spanish, Italian and Dutch:

- duration: a number and a unit of time: "30 days", "7.7 years", "30-day", "30 Tage", "6 mois", "3 jaar",
  "thirty days", "drei Jahre". Salient: a period a source states (a deadline, a term, a span).
- measure: a number and a unit of measure: "1,5 Grad Celsius", "12 kWh", "3 GW", "40 Mt CO2", "5 km". Salient.
- index: a named index's value: "a Gini coefficient of 0,29", "HDI of 0.921". Salient.
- rank: "Platz 13 von 35", "ranked 13th", "13th of 35". Salient.
- ratio: "one in 20", "40 von 100", "1 op de 5", "two thirds", "zwei Drittel", a share hedged by a comparison
  ("more than half", "nearly a third", "plus de la moitié"), a Japanese fraction ("3分の1"). Salient.
- decade: "the 1950s", "die 1990er Jahre", "les années 1980", "the '80s". Salient, as a date is: it supports
  a claim's figures but is not a carrier in the priors (priors/build.py).
- count: a number and the plural noun it counts: "155 individuals", "203 Bürgerdialoge", "700.000 Menschen".
  Salient only when it states a quantity a source would be cited for: the number is at least 10, and the noun is
  not one of a how-to's ("3 steps", "5 tips", "10 ways", "12 pages"). "3 steps" is read (its kind is known) but
  is no claim on its own.
- numbers in words (number_words.py) are read where a unit, a percent word or a fraction word follows them:
  "thirty days", "fünf Prozent", "two thirds". A count in words ("three people") is not read.

Each reader returns Values of its kind; the caller (values.extract_values) runs them after the other figures and
before bare years, and no reader takes a span another took first.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache

from claims_pipeline.corpus.number_words import number_of, trailing_number
from claims_pipeline.corpus.numbers import digit_groups, group_variants, parse_number
from claims_pipeline.corpus.records import Value

# ---- vocabularies (casefolded) --------------------------------------------------------------------------------
DURATION_UNITS: dict[str, str] = {}
for _canon, _forms in {
    "second": "second seconds sec secs sekunde sekunden seconde secondes segundo segundos secondo secondi seconden",
    "minute": "minute minutes min mins minuten minuto minutos minuti minuut",
    "hour": "hour hours hrs stunde stunden std heure heures hora horas ora ore uur uren",
    "day": "day days tag tage tagen tages werktage werktagen arbeitstage kalendertage jour jours día días dia dias "
           "giorno giorni dag dagen werkdagen",
    "week": "week weeks woche wochen semaine semaines semana semanas settimana settimane weken",
    "month": "month months monat monate monaten monats mois mes meses mese mesi maand maanden",
    "year": "year years yr yrs jahr jahre jahren jahres an ans année années año años anno anni jaar jaren",
    "decade": "decade decades jahrzehnt jahrzehnte jahrzehnten décennie décennies década décadas decennio decenni "
              "decennium decennia",
}.items():
    for _f in _forms.split():
        DURATION_UNITS[_f] = _canon
# Equal spans in another unit: a claim's "2 weeks" is a page's "14 days".
DURATION_FACTORS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400}
MONTH_FACTORS = {"month": 1, "year": 12, "decade": 120}

# Measures: written form -> canonical unit. Symbols keep their case ('GW' is no 'gw'); words are casefolded.
_SYMBOLS: dict[str, str] = {}
for _canon, _forms in {
    "°C": "°C|° C|ºC", "°F": "°F|° F",
    "Wh": "Wh", "kWh": "kWh|KWh", "MWh": "MWh", "GWh": "GWh", "TWh": "TWh",
    "kW": "kW|KW", "MW": "MW", "GW": "GW", "TW": "TW", "kWp": "kWp", "MWp": "MWp", "GWp": "GWp",
    "t": "t", "kt": "kt", "Mt": "Mt", "Gt": "Gt", "kg": "kg", "mg": "mg", "µg": "µg|μg",
    "km": "km", "cm": "cm", "mm": "mm", "km²": "km²|km2|qkm", "m²": "m²|m2|qm", "m³": "m³|m3", "ha": "ha",
    "km/h": "km/h|kmh", "mph": "mph", "ppm": "ppm", "ppb": "ppb", "dB": "dB", "Hz": "Hz", "kHz": "kHz",
    "MHz": "MHz", "GHz": "GHz", "GB": "GB", "MB": "MB", "TB": "TB", "Mbit/s": "Mbit/s|Mbps", "Gbit/s": "Gbit/s|Gbps",
    "kcal": "kcal", "l": "l|L", "µg/m³": "µg/m³|µg/m3|μg/m³", "mg/l": "mg/l|mg/L",
}.items():
    for _f in _forms.split("|"):
        _SYMBOLS[_f] = _canon
_WORD_UNITS: dict[str, str] = {}
for _canon, _forms in {
    "°C": "grad celsius|degrees celsius|degree celsius|degrés celsius|degré celsius|grados celsius|grados centígrados"
          "|gradi celsius|gradi centigradi|graden celsius|celsius|grad|degrees|degrés|grados|gradi|graden",
    "°F": "degrees fahrenheit|fahrenheit",
    "kWh": "kilowattstunden|kilowatt-hours|kilowatt hours|kilowattheures|kilovatios hora|kilowattora|kilowattuur",
    "MWh": "megawattstunden|megawatt-hours|megawatt hours|mégawattheures", "GWh": "gigawattstunden|gigawatt-hours",
    "TWh": "terawattstunden|terawatt-hours|térawattheures", "kW": "kilowatt|kilowatts", "MW": "megawatt|megawatts|mégawatts",
    "GW": "gigawatt|gigawatts",
    "t": "metric tons|metric tonnes|metric ton|short tons|tonnen|tonnes|tonne|tons|ton|toneladas|tonnellate",
    "kg": "kilogramm|kilograms|kilogrammes|kilogramos|chilogrammi|kilogram|kilo|kilos",
    "km": "kilometer|kilometers|kilometres|kilomètres|kilómetros|chilometri",
    "m": "meter|metres|meters|mètres|metros|metri", "km²": "quadratkilometer|square kilometres|square kilometers",
    "m²": "square metres|square meters|quadratmeter|mètres carrés|metros cuadrados|metri quadrati|vierkante meter",
    "m³": "cubic metres|cubic meters|kubikmeter|mètres cubes|metros cúbicos|metri cubi|kubieke meter",
    "ha": "hektar|hectares|hectare|hectáreas|ettari", "l": "liter|litres|liters|litros|litri",
    "mi": "miles", "kcal": "kilokalorien|kilocalories",
}.items():
    for _f in _forms.split("|"):
        _WORD_UNITS[_f] = _canon
_SYMBOL_ALT = "|".join(re.escape(s) for s in sorted(_SYMBOLS, key=len, reverse=True))
_WORD_UNIT_ALT = "|".join(re.escape(s) for s in sorted(_WORD_UNITS, key=len, reverse=True))
# '40 Mt CO2', '12 t CO₂e', '3 Mt CO2-Äq.': the gas named after a mass is part of the unit
_CO2 = r"(?:\s?(?:CO2|CO₂)(?:e|eq|-?äq\.?|-equivalent)?)?"
_MEASURE_AFTER_RE = re.compile(
    rf"[ \u00a0\u202f-]?(?:(?P<sym>{_SYMBOL_ALT})(?![\w²³])|(?i:(?P<word>{_WORD_UNIT_ALT}))(?![\w]))(?P<co2>{_CO2})")

# Words that can follow a number without being the noun it counts (function words, verbs, adjectives).
_NOT_NOUNS = frozenset("""
a an and or to of in on at by for from with per the than as is are was were be been being has have had will
would can could may might must should more less about over under up into out after before between since
so that this these those which who each every all both only also not no nor new other such
different major small large big additional young old further many few times hundred thousand
k m mn mln bn mio mrd md mds tn million millions billion billions trillion milliard milliards millionen milliarde
milliarden tausend lakh lakhs lac crore crores millones mil
und oder bis von vom zum zur im in am an auf aus für mit pro je der die das den dem des ein eine einer einem
ist sind war waren wurde wurden hat haben mehr weniger als um über unter bei nach vor seit zu zwischen neue
neuen weitere weiteren andere anderen große kleine
et ou à au aux de des du la le les en pour par sur avec est sont était étaient plus moins que qui dans entre
nouveaux nouvelles autres
y o al del el los las para por con es son fue fueron más menos que entre nuevos nuevas otros otras
e di da della dello degli delle il lo gli per con su è sono era erano più meno che tra fra nuovi nuove altri altre
of tot van het een op voor met zijn meer minder dan tussen nieuwe andere
""".split())
# Nouns of a how-to, a list or a document's own structure: counted, never a claim on their own.
HOWTO_NOUNS = frozenset("""
step steps tip tips way ways thing things reason reasons idea ideas example examples question questions option
options rule rules lesson lessons mistake mistakes trick tricks page pages chapter chapters section sections
item items point points slide slides minute minutes times time click clicks line lines word words character
characters comment comments reply replies star stars
schritt schritte schritten tipp tipps tipps seiten seite kapitel punkte beispiele fragen regeln ideen gründe
étapes étape conseils astuces pages chapitres exemples questions raisons idées
pasos paso consejos trucos páginas capítulos ejemplos preguntas razones ideas
passi passo consigli trucchi pagine capitoli esempi domande ragioni idee
stappen stap tips pagina's hoofdstukken voorbeelden vragen redenen ideeën
""".split())
# A number after one of these labels is the label's number, not a count: "Table 3 shows", "Schritt 2 erklärt".
_LABELS = frozenset("""
table figure fig chapter step page version level phase stage part appendix annex item line note footnote tier
tabelle abbildung abb kapitel schritt seite stufe teil anhang anlage punkt
tableau chapitre étape niveau partie annexe
tabla figura capítulo paso página nivel parte anexo
tabella capitolo passo pagina livello allegato
tabel figuur hoofdstuk stap bijlage deel
""".split())
_MONTH_WORDS = frozenset("""january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec janvier février mars avril mai juin juillet août septembre octobre
novembre décembre januar februar märz april mai juni juli august september oktober november dezember
enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre gennaio febbraio
aprile maggio giugno luglio settembre ottobre dicembre januari februari maart mei augustus""".split())

_FRACTIONS = {
    **dict.fromkeys("half halves hälfte halb demi demie moitié mitad medio mezzo metà helft".split(), 2),
    **dict.fromkeys("third thirds drittel tiers tercio tercios terzo terzi derde derden".split(), 3),
    **dict.fromkeys("quarter quarters viertel quart quarts cuarto cuartos quarto quarti kwart".split(), 4),
    **dict.fromkeys("fifth fifths fünftel cinquième cinquièmes quinto quintos quinti vijfde".split(), 5),
}
# The articles that are a fraction's "one": 'a third', 'ein Drittel', 'un tiers', 'un tercio', 'een derde'
_ONE_ARTICLES = frozenset("a one ein eine un une uno una een één".split())
# A share hedged by a comparison: 'more than half', 'nearly a third', 'mehr als die Hälfte', 'plus de la moitié',
# 'más de la mitad', 'più della metà', 'bijna de helft'. Alone, 'half' and 'a third' are often a manner of speaking
# ('half the battle', 'a third term'); measured against it, the share is a figure a source states.
_HEDGE_BEFORE_FRACTION_RE = re.compile(
    r"(?<![^\W\d_])(?i:(?:nearly|almost|about|around|roughly|approximately|over|more\sthan|less\sthan|fewer\sthan"
    r"|just\sover|just\sunder|well\sover|fast|knapp|rund|etwa|ungefähr|mehr\sals|weniger\sals|über|plus\sde"
    r"|moins\sde|près\sde|presque|environ|más\sde|menos\sde|casi|cerca\sde|alrededor\sde|più\sdi|meno\sdi|quasi"
    r"|circa|oltre|bijna|ruim|meer\sdan|minder\sdan|ongeveer)\s(?:(?:a|the|die|la|l['’]|de|een|ein|eine|un|une|una"
    r"|uno)\s?)?|(?:più|meno)\sdella\s)$")
# A fraction written the Japanese way, the denominator first: '3分の1' (one third), '4分の3'.
_JA_FRACTION_RE = re.compile(r"(\d{1,3})分の(\d{1,3})")
# A Japanese count: a number and its counter word, or 'or more' ('40以上', '155人', '12社', '30か国', '200件'),
# glued to the number as Japanese writes it. At least ten, as counts in the other languages (0004).
_JA_COUNTER_CHAR_RE = re.compile("[以人社件国団関校体]")  # a counter's last character: one C scan, most text has none
_JA_COUNT_RE = re.compile(r"(?<![\d.,])(\d{2,7}|\d{1,3}(?:,\d{3})+)(以上|人|社|件|か国|カ国|ヶ国|団体|機関|校|自治体)")
PCT_WORDS = ("percent", "per cent", "prozent", "pour cent", "por ciento", "per cento", "procent", "percento")
_PCT_WORD_FIRST = frozenset(w.split()[0] for w in PCT_WORDS)

_RANK_WORDS = r"platz|rang|rank|ranked|ranking|place|placed|position|posición|puesto|posto|posizione|plaats|positie|classé|classée"
_RANK_BEFORE_RE = re.compile(rf"(?i:\b(?:{_RANK_WORDS}))\s(?:(?i:no\.|nr\.)\s?)?$")
_ORDINAL_RE = re.compile(r"(?:st|nd|rd|th|e|er|ème|º|°|\.)(?![^\W\d_])")
_OF_RE = re.compile(r"\s(?i:out of|von|of|sur|de|su|van|uit|among)\s(\d{1,7})(?![\d.,]\d)")
_RATIO_AFTER_RE = re.compile(r"\s(?i:in|von|sur|su|op de|op|de cada|van de|out of|uit|sobre|auf)\s(\d{1,7})(?![\d.,]\d)")
_RATIO_BEFORE_RE = re.compile(r"(?i:\b([^\W\d_]+(?:[ -][^\W\d_]+)?)\s(?:in|out of|sur|su|op de|de cada|von|van de|auf))\s$")
_PLACE_AFTER_RE = re.compile(r"\s(?i:place|platz|rang|rank|position|plaats)\b")
_INDEX_BEFORE_RE = re.compile(
    r"(?i:(?P<name>\b[^\W\d_][\w-]*[ -])?(?P<kw>[\w-]*(?:index|indice|índice|koeffizient|coefficient|coefficiente"
    r"|coeficiente|coëfficiënt|score|rating))(?:\s(?:de|di|van|von|of)\s(?P<of>[A-Z][\w-]*))?"
    r"(?:\s(?:of|von|de|du|di|del|della|van|at|is|was|bei|lag bei|liegt bei|est de|était de|es de|è di|ist|war))?)"
    r"\s?[:=]?\s?$")
_DECADE_AFTER_RE = re.compile(r"(?:'?s|’s|er)(?:[ -](?:Jahren?|Jahre))?(?![^\W\d_])")
_DECADE_WORD_BEFORE_RE = re.compile(r"(?i:\b(?:années|jaren|años|anni|decennio degli anni|anni)\s['’]?)$")
_TWO_DIGIT_DECADE_BEFORE_RE = re.compile(r"['’]$")
SUBJECT_VERB_RE = re.compile(
    r"\s(?:was|were|is|saw|marked|brought|became|war|wurde|ist|brachte|markierte|était|fut|a été|a vu|fue|fu|è stato"
    r"|è stata|werd|bracht)\b")
SENTENCE_START_RE = re.compile(r"(?:^|[.!?:;]\s|^\s*(?:[-*+]|\d+\.)\s)\W{0,3}$")
_WORD_RE = re.compile(r"[^\W\d_]+")
_NUM_REST = r"(?:[\d.,]|['’\u00a0\u202f\u2009](?=\d{3})|(?<!\d{4}) (?=\d{3}(?!\d))){0,40}"
# A figure that can be of these kinds: not inside a word or a longer number, with a word or a unit's sign right
# after it ('30 days', '12kWh', '1950s', "'80s", '13th', '1,5 °C') or a word right before it ('Platz 13', 'of
# 0,29', 'one in 20', "anni '80"). Most figures left after money, percentages and dates (list numbers, years in
# brackets, range bounds) are neither, and the scan skips them in C.
# A year ('in 2019 the', '2024 Amendment') is none of them, but as a decade ('1950s', '1990er', "1950's"). The
# number is read whole (atomic: no shorter reading of it is tried against the neighbours).
_CANDIDATE_RE = re.compile(
    rf"\d(?<![\w.]\d)(?!(?<=1)[89]\d\d(?![\d.,'’se])|(?<=2)0\d\d(?![\d.,'’se]))(?:(?<=[^\W\d_][ \u00a0\u202f-]\d)(?>{_NUM_REST})"
    rf"|(?<=['’]\d)(?>{_NUM_REST})|(?>{_NUM_REST})(?=[^\W\d_]|[°µμ'’]|[ \u00a0\u202f-](?:[^\W\d_]|[°µμ])))")
_NUM_BEFORE_UNIT = r"(?:[ \u00a0\u202f]|-(?=[^\W\d_]))?"
_NOUN_AFTER_RE = re.compile(r"[ \u00a0]([^\W\d_][^\W\d_'’-]{2,})(?:[ \u00a0]([^\W\d_]+))?")
_MULTIPLE_AFTER_RE = re.compile(
    r"[\s-](?:(?i:fold)|(?i:times|mal|fois|keer|maal|volte|veces)(?=[\s,](?i:the|more|as|higher|larger|greater|less"
    r"|lower|faster|mehr|so|höher|größer|plus|moins|meer|zo|zoveel|hoger|groter|più|más)\b))")
_DURATION_AFTER_RE = re.compile(
    rf"{_NUM_BEFORE_UNIT}(?i:(business|working|calendar|consecutive|full)[ \u00a0])?([^\W\d_]+)(?![\w])")


@dataclass(frozen=True, slots=True)
class KindReading:
    """What the page reader needs of a value of a new kind: its number(s) and unit, as the claim reader read them."""

    number: float | None
    unit: str  # duration: second/minute/…/year; measure: its canonical unit; count: the noun; index: its name;
    # rank/ratio: ''; decade: ''
    second: float | None = None  # the 35 of 'Platz 13 von 35', the 20 of 'one in 20', the 3 of 'two thirds'


def _free(starts: list[int], ends: list[int], s: int, e: int) -> bool:
    i = bisect_left(starts, e)
    return not (i > 0 and ends[i - 1] > s)


def _reserve(starts: list[int], ends: list[int], s: int, e: int) -> None:
    i = bisect_left(starts, e)
    starts.insert(i, s)
    ends.insert(i, e)


def _number(num: str) -> float | None:
    groups = digit_groups(num)
    return parse_number(groups[0]) if groups else None


def _needles(num: str, raw: str) -> tuple[str, ...]:
    """The figure's digits and their separator variants (the page reader of these kinds reads numbers, not
    needles: these are for the reports and the reference forms)."""
    if num.isdigit():
        return (num,)
    out = [raw]
    for g in digit_groups(num):
        out += group_variants(g)
    return tuple(dict.fromkeys(n for n in out if n))


def _is_year_like(num: str) -> bool:
    return len(num) == 4 and num.isdigit() and 1800 <= int(num) <= 2100


def read_kinds(text: str, starts: list[int], ends: list[int]) -> list[Value]:
    """Values of the new kinds in text, none overlapping the reserved spans (starts/ends, sorted); each value
    found reserves its own span."""
    out: list[Value] = []
    for m in _CANDIDATE_RE.finditer(text):
        s = m.start()
        num = m.group().rstrip(".,'’ \u00a0\u202f\u2009")
        e = s + len(num)
        if not num or not _free(starts, ends, s, e):
            continue
        v = _read_at(text, s, e, num)
        if v is not None and _free(starts, ends, v.pos, v.end):
            _reserve(starts, ends, v.pos, v.end)
            out.append(v)
    if _JA_COUNTER_CHAR_RE.search(text) is not None:  # no space around it either ('出版物が40以上ある')
        for j in _JA_COUNT_RE.finditer(text):
            if _free(starts, ends, j.start(), j.end()):
                n = float(j[1].replace(",", ""))
                _reserve(starts, ends, j.start(), j.end())
                out.append(Value("count", j.group(), (j[1],), n >= 10, j.start(), j.end(), n))
    if "分の" in text:  # '3分の1': Japanese writes no space around it, so the candidate scan above cannot see it
        for j in _JA_FRACTION_RE.finditer(text):
            if int(j[2]) < int(j[1]) and _free(starts, ends, j.start(), j.end()):
                _reserve(starts, ends, j.start(), j.end())
                out.append(Value("ratio", j.group(), (j.group(),), True, j.start(), j.end(), float(j[2])))
    # numbers in words: only where a unit, percent or fraction word stands alone on the line (a C-speed split and
    # one set intersection: most lines have none, and no number in words is read without one)
    present = _GATE_TOKENS.intersection(text.split())
    if present:
        for v in _word_kinds(text, present):
            if _free(starts, ends, v.pos, v.end):
                _reserve(starts, ends, v.pos, v.end)
                out.append(v)
    return out


# The words that must stand right before a figure for a backward-looking reader to apply: a set look-up on the
# few words before each figure is far cheaper than a regex search ending there (most figures have none).
_RANK_WORD_SET = frozenset(_RANK_WORDS.split("|")) | {"no.", "nr."}
_RATIO_CONNECTOR_SET = frozenset("in of sur su de von van auf cada".split())
_DECADE_WORD_SET = frozenset("années jaren años anni".split())
_INDEX_HINT_RE = re.compile("index|indice|índice|koeffizient|coefficient|coefficiente|coeficiente|coëfficiënt|score|rating")


_SIGNS = frozenset("°µμ")
_NAME_BEFORE_RE = re.compile(r"\b[A-Z\u00c0-\u00de][^\W\d_]*\s$|\b[a-z]+[A-Z][^\W\d_]*\s$")
_SENTENCE_START_RE = re.compile(r"(?:^|[.!?:;(\[*|]\s*|^\s*[-*+]\s)$")
_FILE_SIZES = frozenset(("kB", "MB", "GB", "TB"))
_INDEX_LINKS = frozenset("of von de du di del della van at is was bei ist war est es è : =".split())
_BACKWARD_WORDS = _RANK_WORD_SET | _RATIO_CONNECTOR_SET | _DECADE_WORD_SET | _INDEX_LINKS
_SEPS = frozenset(" \u00a0\u202f-")


def _read_at(text: str, s: int, e: int, num: str) -> Value | None:
    """The kind of the figure num (text[s:e]) from its neighbours, or None."""
    n = float(num) if num.isdigit() else _number(num)
    if n is None:
        return None
    year_like = len(num) == 4 and 1800 <= n <= 2100 and num.isdigit()
    # the words before: only where a word ends right before the figure ('Platz 13', "anni '80")
    if s >= 2 and text[s - 1] in " \u00a0'’" and not text[s - 2].isdigit():
        before = text[max(0, s - 48):s].casefold().split()[-5:]
        last = before[-1].lstrip("'’") if before else ""
    else:
        before, last = [], ""
    nxt = text[e:e + 1]
    after = text[e + 1:e + 2]
    forward = (nxt.isalpha() or nxt in _SIGNS or nxt in "'’" or (nxt in _SEPS and (after.isalpha() or after in _SIGNS))
               or (nxt == "." and after == " " and text[e + 2:e + 3].isalpha()))
    if not forward and last not in _BACKWARD_WORDS and _INDEX_HINT_RE.search(last) is None:
        return None  # no word after it, and none before it that a rank, ratio, index or decade needs
    # decades: '1950s', "1950's", '1990er Jahre', 'années 1980', "the '80s", 'anni 80'
    if (len(num) == 4 and num[3] == "0" and num[:2] in ("18", "19", "20")) or (len(num) == 2 and num[1] == "0"):
        d = _DECADE_AFTER_RE.match(text, e)
        before_word = _DECADE_WORD_BEFORE_RE.search(text, max(0, s - 30), s) if last in _DECADE_WORD_SET or (
            len(before) > 1 and last == "" and before[-2] in _DECADE_WORD_SET) else None
        if d is not None or before_word is not None:
            if len(num) == 4 or before_word is not None or _TWO_DIGIT_DECADE_BEFORE_RE.search(text, max(0, s - 1), s):
                start = before_word.start() if before_word is not None else s - (1 if len(num) == 2 and s and text[s - 1] in "'’" else 0)
                end = d.end() if d is not None else e
                year = n if len(num) == 4 else 1900 + n
                return Value("decade", text[start:end], (num, str(int(year))), True, start, end, year)
    if not year_like and before:
        # a named index's value: 'a Gini coefficient of 0,29'
        if _INDEX_HINT_RE.search(" ".join(before[-3:])) is not None and (
                ix := _INDEX_BEFORE_RE.search(text, max(0, s - 60), s)) is not None:
            start = ix.start("kw") if ix.group("name") is None or ix.group("name").strip().casefold() in _NOT_NOUNS else ix.start("name")
            return Value("index", text[start:e], _needles(num, num), True, start, e, _decimal(num))
        # 'one in 20' (the first number in words)
        if last in _RATIO_CONNECTOR_SET and (b := _RATIO_BEFORE_RE.search(text, max(0, s - 30), s)) is not None:
            first = number_of(b.group(1)) or (1 if b.group(1).casefold() in _ONE_ARTICLES else None)
            if first is not None and first < n:
                return Value("ratio", text[b.start():e], _needles(num, num), True, b.start(), e, float(first))
    # ranks: 'Platz 13 von 35', 'ranked 13th', '13th of 35', '13e place'
    rank_kw = _RANK_BEFORE_RE.search(text, max(0, s - 16), s) if last in _RANK_WORD_SET and not year_like else None
    ordinal = _ORDINAL_RE.match(text, e) if nxt and not nxt.isspace() and not year_like else None
    if rank_kw is not None or (ordinal is not None and (_PLACE_AFTER_RE.match(text, ordinal.end())
                                                       or _OF_RE.match(text, ordinal.end()))):
        end = ordinal.end() if ordinal is not None else e
        if rank_kw is not None and ordinal is not None and ordinal.group() == "." and not (
                _OF_RE.match(text, end) or _PLACE_AFTER_RE.match(text, end)):
            end = e  # 'position 8.': the sentence's full stop
        of = _OF_RE.match(text, end)
        start = rank_kw.start() if rank_kw is not None else s
        if of is not None and int(of.group(1)) >= n:
            end = of.end()
        elif (p := _PLACE_AFTER_RE.match(text, end)) is not None:
            end = p.end()
        return Value("rank", text[start:end], _needles(num, num), True, start, end, n)
    if year_like or not (nxt.isalpha() or nxt in _SIGNS or (nxt in _SEPS and (after.isalpha() or after in _SIGNS))):
        return None  # a year ('2000 km' is not read), or nothing that can be a unit, a noun or a connector follows
    # ratios: '40 von 100', '1 op de 5', '1 in 5'
    if not year_like and n.is_integer() and (r := _RATIO_AFTER_RE.match(text, e)) is not None:
        second = int(r.group(1))
        if second > n and not _is_year_like(r.group(1)):
            return Value("ratio", text[s:r.end()], _needles(num, num), True, s, r.end(), n)
    # multiples: '25 times the warming potential', '34 times more', '3-fold', '3-mal so hoch', '2 fois plus',
    # '4 keer zo groot': a comparison with a measured base, as a source states it ('3 times a week' is no multiple)
    if n >= 2 and (m := _MULTIPLE_AFTER_RE.match(text, e)) is not None:
        return Value("ratio", text[s:m.end()], _needles(num, num), True, s, m.end(), n)
    # durations: '30 days', '30-day', '7.7 years', '30 Tage', '6 mois', '3 jaar' (a dictionary look-up: first)
    if (d := _DURATION_AFTER_RE.match(text, e)) is not None and d.group(2).casefold() in DURATION_UNITS:
        if not (d.group(2) in ("an", "min", "ore", "mes") and not _is_latin_unit_context(d.group(2), text, d.end())):
            return Value("duration", text[s:d.end()], _needles(num, num), True, s, d.end(), _decimal(num))
    # measures: '12 kWh', '1,5 Grad Celsius', '40 Mt CO2', '5 km'
    if (u := _MEASURE_AFTER_RE.match(text, e)) is not None:
        # a file's size ('the PDF (~27 MB)') is the link's, not a figure the source states
        salient = u.group("sym") not in _FILE_SIZES
        return Value("measure", text[s:u.end()], _needles(num, num), salient, s, u.end(), _decimal(num))
    # counts: '155 individuals', '203 Bürgerdialoge', '700.000 Menschen'
    if year_like or nxt not in " \u00a0" or (s >= 2 and text[s - 1] in "-–—/" and text[s - 2].isdigit()):
        return None  # a year, or the end of a range of years ('the 2018–19 academic year')
    c = _NOUN_AFTER_RE.match(text, e)
    if c is None:
        return None
    if s >= 2 and text[s - 1] == "-" and text[s - 2].isalpha():
        return None  # 'COVID-19 cases', 'G-20 members': the number is part of a name
    if (name := _NAME_BEFORE_RE.search(text, max(0, s - 40), s)) is not None and not _SENTENCE_START_RE.search(
            text, max(0, name.start() - 4), name.start()):
        return None  # 'Windows 10 users', 'iPhone 12 owners': a capitalised word inside a sentence names a thing
    noun = c.group(1)
    folded = noun.casefold()
    if (folded in _NOT_NOUNS or folded in _MONTH_WORDS or folded in _PCT_WORD_FIRST or folded in DURATION_UNITS
            or (last.rstrip(".") in _LABELS)):
        return None
    if noun[0].isupper() and c.group(2) and c.group(2)[0].isupper():
        return None  # '155 Main Street': a name, not a counted thing
    end = c.start(1) + len(noun.rstrip("'’-"))
    salient = n >= 10 and folded not in HOWTO_NOUNS
    return Value("count", text[s:end], _needles(num, num), salient, s, end, n)


def _is_latin_unit_context(unit: str, text: str, end: int) -> bool:
    """'an', 'min', 'ore', 'mes' are units only where no other word reads them as one: '5 ans', '30 min.'"""
    return unit != "an" or not re.match(r"\s(?:hour|increase|estimated|additional|average)", text[end:end + 12], re.I)


def _decimal(num: str) -> float | None:
    """A measure's, duration's or index's number: '0,29' and '1,5' are decimals; '1,500' groups thousands."""
    if num.isdigit():
        return float(num)
    groups = digit_groups(num)
    return parse_number(groups[0]) if groups else None


# ---- numbers in words: 'thirty days', 'fünf Prozent', 'two thirds' ----------------------------------------------
_FRACTION_WORDS = frozenset(_FRACTIONS)
_WORD_UNIT_WORDS = frozenset(DURATION_UNITS) | _FRACTION_WORDS | _PCT_WORD_FIRST


_SHARE_OF_RE = re.compile(r"\s(?i:of|der|des|aller|de|du|d['’]|di|del|della|dei|degli|delle|van)\b")


# The words after a number in words that make it a figure, as a line's whitespace-split tokens hold them: in three
# cases, and with the punctuation that may follow ('days.', 'Jahre,', 'percent)'). Percent words of two words are
# found by their second ('per cent', 'pour cent', 'por ciento', 'per cento'); words common in prose with no number
# before them ('an', 'tag', 'per') are left out ('half' is in: it is read only hedged, 'more than half'): a line holding none of these needs no look at its words.
_GATE_WORDS = (frozenset(DURATION_UNITS) - {"an", "tag", "min", "mins", "sec", "secs", "std", "ore", "mes", "yr", "yrs"}
               | _FRACTION_WORDS
               | {"percent", "prozent", "procent", "percento", "cent", "cento", "ciento"})
_GATE_VARIANTS = frozenset(x for w in _GATE_WORDS for x in (w, w.capitalize(), w.upper()))
_GATE_TOKENS = frozenset(v + p for v in _GATE_VARIANTS for p in ("", ".", ",", ";", ":", ")", "!", "?", "*", "**"))
_PCT_LEAD_RE = re.compile(r"(?i:per|pour|por)\s$")


def has_number_words(text: str) -> bool:
    """Can text hold a figure written only in words ('thirty days', 'fünf Prozent', 'two thirds')? A necessary
    condition, as cheap as read_kinds' own gate: a line with no digit and no such word holds no figure."""
    return not _GATE_TOKENS.isdisjoint(text.split())


@lru_cache(maxsize=512)
def _unit_word_re(word: str) -> re.Pattern[str]:
    # the word first, its boundary checked after: a pattern that opens with a literal is found by a fast search
    return re.compile(rf"{re.escape(word)}(?<![^\W\d_]{re.escape(word)})(?![^\W\d_])")


def _word_kinds(text: str, tokens: frozenset[str]) -> list[Value]:
    """Durations, percentages and ratios written with a number in words, found from the gate's tokens."""
    out: list[Value] = []
    for word in {t.rstrip(".,;:)!?*") for t in tokens}:
        unit = word.casefold()
        for w in _unit_word_re(word).finditer(text):
            ustart = w.start()
            if unit in ("cent", "cento", "ciento"):
                lead = _PCT_LEAD_RE.search(text, max(0, ustart - 5), ustart)
                if lead is None:
                    continue
                ustart = lead.start()
            if ustart >= 2 and text[ustart - 2].isdigit():
                continue  # '5 years': the figure in digits, read already
            v = _word_figure(text, ustart, w.end(), unit)
            if v is not None:
                out.append(v)
    out.sort(key=lambda v: v.pos)
    return out


def _word_figure(text: str, ustart: int, uend: int, unit: str) -> Value | None:
    """The figure a number in words before the unit word text[ustart:uend] makes, or None."""
    # the words before it: only spaces and hyphens between them ('twenty-five', 'treinta y cinco')
    words = list(_WORD_RE.finditer(text, max(0, ustart - 48), ustart))
    if not words or text[words[-1].end():ustart] not in (" ", "-", "\u00a0"):
        return None
    got = trailing_number([x.group() for x in words[-4:]])
    hedge = None
    if got is None and unit in _FRACTION_WORDS:
        if (hedge := _HEDGE_BEFORE_FRACTION_RE.search(text, max(0, ustart - 24), ustart)) is not None:
            got = (1, 1)  # 'more than half', 'nearly a third include', 'plus de la moitié'
        elif words[-1].group().casefold() in _ONE_ARTICLES and _SHARE_OF_RE.match(text, uend) is not None:
            got = (1, 1)  # 'a third of voters', 'ein Drittel der'; not 'a third term'
    elif got is not None and _FRACTIONS.get(unit) == 2 and got[0] == 1:
        got = None  # 'one half' alone: a manner of speaking as 'half' is, unless hedged (above) or a count of halves
    if got is None:
        return None
    value, taken = got
    if any(text[words[j].end():words[j + 1].start()] not in (" ", "-") for j in range(len(words) - taken, len(words) - 1)):
        return None
    start = hedge.start() if hedge is not None else words[-taken].start()
    raw = text[start:uend]
    if unit in _FRACTION_WORDS:
        if value >= _FRACTIONS[unit]:
            return None  # 'four thirds': no share
        return Value("ratio", raw, (raw,), True, start, uend, float(value))
    if unit in DURATION_UNITS:
        return Value("duration", raw, (str(value), raw), True, start, uend, float(value))
    return Value("pct", raw, (str(value),), True, start, uend, float(value))


# ---- reading a value back (for the page reader) ------------------------------------------------------------------
_OF_ANY_RE = re.compile(r"(?i:out of|von|of|sur|de|su|van|uit|among|in|op de|op|de cada|van de|sobre|auf)\s(\d{1,7})\s*$")


@lru_cache(maxsize=8192)
def kind_reading(vtype: str, raw: str, number: float | None) -> KindReading:
    """The number(s) and unit of a value of a new kind, read from its raw text."""
    low = raw.casefold()
    if vtype == "duration":
        unit_word = _WORD_RE.findall(low)[-1] if _WORD_RE.findall(low) else ""
        return KindReading(number, DURATION_UNITS.get(unit_word, unit_word))
    if vtype == "measure":
        digits = re.search(r"\d[\d.,]*", raw)
        tail = raw[digits.end():] if digits else raw
        u = _MEASURE_AFTER_RE.match(tail)
        unit = (_SYMBOLS.get(u.group("sym") or "") or _WORD_UNITS.get((u.group("word") or "").casefold(), "")) if u else ""
        return KindReading(number, unit)
    if vtype == "count":
        words = _WORD_RE.findall(raw)
        return KindReading(number, words[-1] if words else "")
    if vtype == "index":
        words = [w for w in _WORD_RE.findall(raw) if w.casefold() not in _NOT_NOUNS]
        return KindReading(number, words[0] if words else "")
    if vtype in ("rank", "ratio"):
        m = _OF_ANY_RE.search(raw)
        second: float | None = float(m.group(1)) if m else None
        frac = _WORD_RE.findall(low)
        if second is None and frac and frac[-1] in _FRACTIONS:
            second = float(_FRACTIONS[frac[-1]])
        elif second is None and (j := _JA_FRACTION_RE.fullmatch(raw)) is not None:
            second = float(j[1])
        return KindReading(number, "", second)
    return KindReading(number, "")
