"""Numbers written in words, 1 to 99 (and hundred, thousand), in English, German, French, Spanish, Italian and
Dutch: "thirty", "dreißig", "trente", "treinta", "trenta", "dertig"; "twenty-five", "fünfundzwanzig",
"vingt-cinq", "veinticinco", "venticinque", "vijfentwintig".

Shared by the claim reader (corpus/figure_kinds.py: "thirty days", "drei Jahre", "two thirds") and the page
reader (priors/kinds.py: a claim's "30 days" found as "thirty days"). Keys are normalised (casefolded, hyphens
as spaces, one space between words): look a phrase up with number_of(phrase).

The articles that double as "one" ("a", "ein", "un", "une", "una", "een") are not numbers here: "ein Jahr"
or "un an" is a phrase, not a cited figure (docs/decisions/0004).
"""

from __future__ import annotations

from functools import lru_cache

_UNITS = {
    "en": ["", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
           "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"],
    "de": ["", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun", "zehn", "elf", "zwölf",
           "dreizehn", "vierzehn", "fünfzehn", "sechzehn", "siebzehn", "achtzehn", "neunzehn"],
    "fr": ["", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix", "onze", "douze",
           "treize", "quatorze", "quinze", "seize", "dix sept", "dix huit", "dix neuf"],
    "es": ["", "uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve", "diez", "once", "doce",
           "trece", "catorce", "quince", "dieciséis", "diecisiete", "dieciocho", "diecinueve"],
    "it": ["", "uno", "due", "tre", "quattro", "cinque", "sei", "sette", "otto", "nove", "dieci", "undici", "dodici",
           "tredici", "quattordici", "quindici", "sedici", "diciassette", "diciotto", "diciannove"],
    "nl": ["", "één", "twee", "drie", "vier", "vijf", "zes", "zeven", "acht", "negen", "tien", "elf", "twaalf",
           "dertien", "veertien", "vijftien", "zestien", "zeventien", "achttien", "negentien"],
}
_TENS = {
    "en": ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"],
    "de": ["", "", "zwanzig", "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig"],
    "fr": ["", "", "vingt", "trente", "quarante", "cinquante", "soixante", "", "quatre vingt", ""],
    "es": ["", "", "veinte", "treinta", "cuarenta", "cincuenta", "sesenta", "setenta", "ochenta", "noventa"],
    "it": ["", "", "venti", "trenta", "quaranta", "cinquanta", "sessanta", "settanta", "ottanta", "novanta"],
    "nl": ["", "", "twintig", "dertig", "veertig", "vijftig", "zestig", "zeventig", "tachtig", "negentig"],
}
_SPANISH_TWENTIES = ["veinte", "veintiuno", "veintidós", "veintitrés", "veinticuatro", "veinticinco", "veintiséis",
                     "veintisiete", "veintiocho", "veintinueve"]
_BIG = {"hundred": 100, "one hundred": 100, "hundert": 100, "einhundert": 100, "cent": 100, "cien": 100,
        "cento": 100, "honderd": 100, "thousand": 1000, "one thousand": 1000, "tausend": 1000,
        "eintausend": 1000, "mille": 1000, "mil": 1000, "duizend": 1000}


def _build() -> dict[str, int]:
    out: dict[str, int] = {}
    for lang, units in _UNITS.items():
        for n, w in enumerate(units):
            if w:
                out.setdefault(w, n)
        for t, tw in enumerate(_TENS[lang]):
            if not tw:
                continue
            out.setdefault(tw, 10 * t)
            for u in range(1, 10):
                uw = units[u]
                if lang == "en":
                    forms = [f"{tw} {uw}"]
                elif lang == "de":
                    forms = [("ein" if u == 1 else uw) + "und" + tw]
                elif lang == "fr":
                    forms = [f"{tw} et un" if u == 1 else f"{tw} {uw}"] + ([f"{tw} un"] if u == 1 else [])
                elif lang == "es":
                    forms = [_SPANISH_TWENTIES[u]] if t == 2 else [f"{tw} y {uw}"]
                elif lang == "it":
                    forms = [(tw[:-1] if uw[0] in "uo" else tw) + uw]  # ventuno, ventotto
                    if u == 3:
                        forms.append(tw + "tré")
                else:  # nl: vijfentwintig, tweeëntwintig
                    forms = [("een" if u == 1 else uw) + ("ën" if uw.endswith("e") else "en") + tw]
                for f in forms:
                    out.setdefault(f, 10 * t + u)
    # French 70-79 and 90-99: soixante-dix, soixante et onze, quatre-vingt-dix ...
    for base, tw in ((60, "soixante"), (80, "quatre vingt")):
        out.setdefault(f"{tw} dix", base + 10)
        for u in range(11, 20):
            out.setdefault(f"{tw} {_UNITS['fr'][u]}", base + u)
        out.setdefault("soixante et onze", 71)
    out["quatre vingts"] = 80
    out.update(_BIG)
    for article in ("un", "uno"):  # 'un an', 'uno de ...': articles alone; 'vingt et un' keeps its 'un'
        del out[article]
    return {k.casefold(): v for k, v in out.items()}  # 'dreißig' -> 'dreissig', as normalise() folds a phrase


NUMBER_WORDS: dict[str, int] = _build()
# The forms of each value, for the page reader: 30 -> ("thirty", "dreißig", "trente", ...)
FORMS_OF: dict[int, tuple[str, ...]] = {}
for _w, _n in NUMBER_WORDS.items():
    FORMS_OF[_n] = (*FORMS_OF.get(_n, ()), _w)
# The words any number phrase can end with (its last word), for a scan that starts from a unit word and looks back
LAST_WORDS: frozenset[str] = frozenset(w.rsplit(" ", 1)[-1] for w in NUMBER_WORDS)
MAX_WORDS = max(len(w.split(" ")) for w in NUMBER_WORDS)


def normalise(phrase: str) -> str:
    return " ".join(phrase.casefold().replace("-", " ").replace("\u00a0", " ").split())


@lru_cache(maxsize=4096)
def number_of(phrase: str) -> int | None:
    """The value of a number written in words ('Thirty', 'twenty-five', 'vingt et un'), or None."""
    return NUMBER_WORDS.get(normalise(phrase))


def trailing_number(words: list[str]) -> tuple[int, int] | None:
    """The longest number phrase that ends the word list: (value, how many words it takes), or None."""
    for k in range(min(MAX_WORDS, len(words)), 0, -1):
        n = NUMBER_WORDS.get(" ".join(w.casefold() for w in words[-k:]))
        if n is not None:
            return n, k
    return None
