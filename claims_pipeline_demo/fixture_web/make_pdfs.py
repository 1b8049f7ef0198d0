"""Generate the fixture PDFs from code (no network, no reportlab): ``python -m claims_pipeline_demo.fixture_web.make_pdfs``.

A tiny PDF writer (standard Helvetica, WinAnsi text, Flate streams, raw image XObjects) makes the text, scanned
and bomb files; pypdf encrypts. Output: ``sites/pdfs.fixture/``:
- tax-table.pdf       two pages of figures laid out as a table (rates, thresholds, a "1 000 000", €, years)
- gazette.pdf         a two-column gazette page (a title over both columns, a table across them, two more
                      columns under it)
- scanned.pdf         one page holding only an image (no text layer)
- encrypted.pdf       tax-table encrypted with a user password ("secret")
- owner-only.pdf      tax-table encrypted with an EMPTY user password (readable, printing restricted)
- corrupt.pdf         tax-table cut off after its header and first objects (no xref, no page content)
- many-pages.pdf      2,000 small pages (a page bomb: the page cap must stop it)
- bomb.pdf            one page whose content stream inflates from ~200 KB to ~120 MB (time/size caps stop it)
- not-a-pdf.pdf       an HTML error page served under a .pdf name
Byte-reproducible (pypdf encrypts with RC4 under a fixed /ID, so even those bytes are stable).

It also writes the HTML pages whose bytes contradict their declared charset to ``sites/text.fixture/``
(hand-editing such files is error-prone; the readable fixtures there are plain UTF-8 files):
- charset-cp1252-says-utf8.html   cp1252 bytes (è, €, ß) under <meta charset="utf-8">
- charset-utf8-says-latin1.html   UTF-8 bytes under <meta charset="iso-8859-1">
- charset-big5-says-utf8.html     Big5 bytes (中華民國) under <meta charset="utf-8">
- charset-utf16-bom.html          UTF-16 LE with a BOM, no declaration
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from pathlib import Path

SITES_DIR = Path(__file__).resolve().parent / "sites"
PDF_DIR = SITES_DIR / "pdfs.fixture"
TEXT_DIR = SITES_DIR / "text.fixture"

TAX_TABLE_ROWS = [
    ("Band", "Taxable income (EUR)", "Rate", "Since"),
    ("Basic", "0 - 12 570", "0 %", "2021"),
    ("Standard", "12 571 - 50 270", "20 %", "2023"),
    ("Higher", "50 271 - 125 140", "40 %", "2023"),
    ("Additional", "over 125 140", "45 %", "2024"),
    ("Social levy", "all income", "6.32 %", "2025"),
]


def _escape(text: str) -> bytes:
    raw = text.encode("cp1252")  # WinAnsiEncoding is cp1252 for the characters we use (€ is 0x80)
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def text_ops(lines: Sequence[tuple[float, float, float, str]]) -> bytes:
    """Content-stream operators drawing each (x, y, size, text)."""
    ops = []
    for x, y, size, text in lines:
        ops.append(b"BT /F1 %g Tf %g %g Td (%s) Tj ET" % (size, x, y, _escape(text)))
    return b"\n".join(ops) + b"\n"


class PdfBuilder:
    """Just enough of PDF 1.4: numbered objects, an xref table, a trailer."""

    def __init__(self) -> None:
        self.objects: list[bytes] = []

    def add(self, body: bytes) -> int:
        self.objects.append(body)
        return len(self.objects)

    def reserve(self) -> int:
        return self.add(b"null")

    def set(self, num: int, body: bytes) -> None:
        self.objects[num - 1] = body

    def stream(self, data: bytes, extra: bytes = b"", *, compress: bool = True) -> int:
        if compress:
            data = zlib.compress(data, 9)
            extra += b" /Filter /FlateDecode"
        return self.add(b"<< /Length %d%s >>\nstream\n" % (len(data), extra) + data + b"\nendstream")

    def build(self, root: int) -> bytes:
        out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
        offsets = []
        for i, body in enumerate(self.objects, start=1):
            offsets.append(len(out))
            out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
        xref = len(out)
        out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(self.objects) + 1)
        for off in offsets:
            out += b"%010d 00000 n \n" % off
        out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(self.objects) + 1, root, xref)
        return bytes(out)


def _document(builder: PdfBuilder, contents: list[int], *, with_font: bool = True, xobjects: bytes = b"") -> bytes:
    font = builder.add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    pages = builder.reserve()
    resources = b"<< /Font << /F1 %d 0 R >> %s>>" % (font, xobjects) if with_font else b"<< %s>>" % xobjects
    kids = []
    for content in contents:
        kids.append(builder.add(
            b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Resources %s /Contents %d 0 R >>"
            % (pages, resources, content)))
    builder.set(pages, b"<< /Type /Pages /Kids [%s] /Count %d >>"
                % (b" ".join(b"%d 0 R" % k for k in kids), len(kids)))
    catalog = builder.add(b"<< /Type /Catalog /Pages %d 0 R >>" % pages)
    return builder.build(catalog)


def text_pdf(pages: Sequence[Sequence[tuple[float, float, float, str]]]) -> bytes:
    """A PDF with one page per list of (x, y, size, text) lines."""
    b = PdfBuilder()
    return _document(b, [b.stream(text_ops(lines)) for lines in pages])


def tax_table_pdf() -> bytes:
    columns = (60, 170, 340, 430)
    page1 = [(60, 780, 16, "Income tax bands 2025"), (60, 760, 10, "Published 3 March 2025 by the Revenue Office")]
    y = 720
    for row in TAX_TABLE_ROWS:
        page1 += [(x, y, 10, cell) for x, cell in zip(columns, row)]
        y -= 18
    page1 += [(60, y - 20, 10, "Registered taxpayers: 1 000 000 (2024). Levy receipts: 3 450 million \u20ac.")]
    page2 = [(60, 780, 12, "Notes"), (60, 760, 10, "1. The social levy of 6.32 % applies from 1 January 2025."),
             (60, 742, 10, "2. Thresholds are indexed each April.")]
    return text_pdf([page1, page2])


GAZETTE_LEFT = ["The annual property levy is charged on the", "cadastral value of every dwelling at a rate of",
                "0.8 % from 1 January 2025, replacing the", "earlier rate of 0.65 % set by Law 2019-114.",
                "Owners pay in two instalments, in March and", "in September of each year."]
GAZETTE_RIGHT = ["Non-residents who buy land need a licence", "under Act No. 31 of the Lands Code. The",
                 "fee is €900 for a dwelling and €1,500 for", "farmland, payable when the application is",
                 "filed with the Lands Office in the capital."]
GAZETTE_TABLE = [("Residential dwellings", "0.8 %"), ("Commercial premises", "1.2 %")]
GAZETTE_LEFT_2 = ["Appeals against an assessment go to the", "regional tax tribunal within 60 days of",
                  "the notice, as Article 14 of the Code sets."]
GAZETTE_RIGHT_2 = ["The licence fee is waived for buyers who", "have lived in Xanadia for five years or",
                   "more before the date of the purchase."]


def gazette_pdf() -> bytes:
    """A gazette page in two columns (x 50 and 310): a title over both, two columns of prose, a two-cell table
    whose cells straddle the gutter, then two more columns."""
    lines: list[tuple[float, float, float, str]] = [(50, 800, 14, "Official Gazette of Xanadia, No. 42 of 3 March 2025")]
    y = 770.0
    for k in range(max(len(GAZETTE_LEFT), len(GAZETTE_RIGHT))):
        lines += [(x, y, 9, column[k]) for x, column in ((50, GAZETTE_LEFT), (310, GAZETTE_RIGHT)) if k < len(column)]
        y -= 12
    y -= 24
    for label, rate in GAZETTE_TABLE:
        lines += [(50, y, 9, label), (400, y, 9, rate)]
        y -= 12
    y -= 24
    for left, right in zip(GAZETTE_LEFT_2, GAZETTE_RIGHT_2):
        lines += [(50, y, 9, left), (310, y, 9, right)]
        y -= 12
    return text_pdf([lines])


def multi_page_pdf(n_pages: int, lines_per_page: int = 45) -> bytes:
    """Realistic text pages (for the benchmark): a report with figures on every line."""
    pages = []
    for p in range(n_pages):
        lines = [(50, 800, 12, f"Statistical report, page {p + 1}")]
        for i in range(lines_per_page):
            n = p * lines_per_page + i
            lines.append((50, 780 - i * 16, 9,
                          f"Region {n % 97:02d}: population {1000 + n * 37:,} people; growth {n % 9}.{n % 10} %; "
                          f"budget {n * 13 % 5000} million EUR in {2000 + n % 26}."))
        pages.append(lines)
    return text_pdf(pages)


def scanned_pdf() -> bytes:
    """One page drawn by a grey-scale image only: what a scanner produces, no text operators at all."""
    b = PdfBuilder()
    w, h = 120, 60
    pixels = bytes(((x // 8 + y // 6) % 2) * 200 + 30 for y in range(h) for x in range(w))  # stripes "of text"
    img = b.stream(pixels, b" /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
                           b"/BitsPerComponent 8" % (w, h))
    content = b.stream(b"q 480 0 0 240 57 500 cm /Im1 Do Q\n")
    return _document(b, [content], with_font=False, xobjects=b"/XObject << /Im1 %d 0 R >> " % img)


def many_pages_pdf(n_pages: int = 2000) -> bytes:
    """A page bomb: thousands of pages sharing one small content stream."""
    b = PdfBuilder()
    content = b.stream(text_ops([(60, 780, 12, "Page of a very long document: rate 1.5 %")]))
    return _document(b, [content] * n_pages)


def bomb_pdf(inflated_bytes: int = 120_000_000) -> bytes:
    """A decompression bomb: one page whose Flate stream inflates ~600x into text-drawing operators."""
    unit = b"BT /F1 6 Tf 20 20 Td (0123456789 bomb text 42 %) Tj ET\n"
    comp = zlib.compressobj(9)
    chunk = unit * (1_000_000 // len(unit))
    parts = [comp.compress(chunk) for _ in range(max(1, inflated_bytes // len(chunk)))]
    data = b"".join(parts) + comp.flush()
    b = PdfBuilder()
    content = b.add(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream")
    return _document(b, [content])


def encrypted_pdf(source: bytes, user_password: str, owner_password: str) -> bytes:
    from io import BytesIO

    from pypdf import PdfReader, PdfWriter
    from pypdf.constants import UserAccessPermissions
    from pypdf.generic import ArrayObject, ByteStringObject

    writer = PdfWriter(clone_from=PdfReader(BytesIO(source)))
    fixed_id = ByteStringObject(b"claims-fixture-0")  # stable /ID → stable RC4 key → reproducible bytes
    writer._ID = ArrayObject([fixed_id, fixed_id])
    writer.encrypt(user_password=user_password, owner_password=owner_password, algorithm="RC4-128",
                   permissions_flag=UserAccessPermissions(0))
    writer._ID = ArrayObject([fixed_id, fixed_id])  # encrypt() draws a random second /ID; the key uses the first
    buf = BytesIO()
    writer.write(buf)
    return buf.getvalue()


def corrupt_pdf(source: bytes) -> bytes:
    """The header and the first objects only: no page content, no xref, no trailer (a cut-off download)."""
    cut = source.index(b"stream\n") + 20
    return source[:cut]


NOT_A_PDF = (b"<!DOCTYPE html><html><head><title>404 Not Found</title></head><body><h1>Not Found</h1>"
             b"<p>The requested document was moved. Please use the search page.</p></body></html>\n")


def _page(charset_label: str, title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html><head><meta charset="{charset_label}"><title>{title}</title></head>\n'
            f"<body><main>\n{body}\n</main></body></html>\n")


WESTERN_BODY = (
    "<h1>Frais de notaire et taxe foncière</h1>\n"
    "<p>Le barème de l'année 2025 prévoit des frais de 7,5 % et une taxe de 1 200 € pour la résidence "
    "principale. Les propriétaires à l'étranger paient également 450 € de frais de dossier.</p>\n"
    "<p>Grundsteuer in der Hauptstraße: 3,5 ‰ des Einheitswerts, mindestens 150 € pro Jahr (Stand 2024).</p>\n"
    "<p>Crème brûlée coûte 8,90 € à Paris; très élevé.</p>"
)
CHINESE_BODY = (
    "<h1>中華民國統計資訊網</h1>\n"
    "<p>中華民國一百一十三年底人口總數為二千三百四十萬人，較上年增加百分之零點一。</p>\n"
    "<p>國內生產毛額成長率為百分之三點一，平均每人所得新臺幣九十八萬元。</p>\n"
    "<p>資料來源：內政部戶政司，民國一一四年三月發布。</p>"
)


def charset_pages() -> dict[str, bytes]:
    return {
        "charset-cp1252-says-utf8.html": _page("utf-8", "Barème 2025", WESTERN_BODY).encode("cp1252"),
        "charset-utf8-says-latin1.html": _page("iso-8859-1", "Barème 2025", WESTERN_BODY).encode("utf-8"),
        "charset-big5-says-utf8.html": _page("utf-8", "統計", CHINESE_BODY).encode("big5"),
        "charset-utf16-bom.html": _page("utf-16", "Barème 2025", WESTERN_BODY).encode("utf-16"),
    }


def build_all(out_dir: Path = PDF_DIR, text_dir: Path = TEXT_DIR) -> dict[str, int]:
    """Write every fixture PDF; returns name → size."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tax = tax_table_pdf()
    files = {
        "tax-table.pdf": tax,
        "gazette.pdf": gazette_pdf(),
        "scanned.pdf": scanned_pdf(),
        "encrypted.pdf": encrypted_pdf(tax, "secret", "owner-secret"),
        "owner-only.pdf": encrypted_pdf(tax, "", "owner-secret"),
        "corrupt.pdf": corrupt_pdf(tax),
        "many-pages.pdf": many_pages_pdf(),
        "bomb.pdf": bomb_pdf(),
        "not-a-pdf.pdf": NOT_A_PDF,
    }
    for name, data in files.items():
        (out_dir / name).write_bytes(data)
    text_dir.mkdir(parents=True, exist_ok=True)
    pages = charset_pages()
    for name, data in pages.items():
        (text_dir / name).write_bytes(data)
    return {name: len(data) for name, data in {**files, **pages}.items()}


if __name__ == "__main__":
    for name, size in build_all().items():
        print(f"{name}: {size} bytes")
