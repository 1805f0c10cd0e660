"""Real files through the real parsers (MinerU flash tier in its worker process, Markdown directly)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rag.index.chunking import Chunker
from rag.parsing.loader import DocumentLoader, SkipFile
from rag.parsing.mineru_worker import MinerUOptions
from rag.types import Citation

SECTIONS = [
    ("1 Travel", [("1.1 Booking", "Book trains through the travel portal."), ("1.2 Meals", "The daily meal allowance is 45 EUR.")]),
    ("2 Leave", [("2.1 Annual leave", "Employees receive 26 days of annual leave."), ("2.2 Sick leave", "Tell your manager before 10:00.")]),
    ("3 Security", [("3.1 Passwords", "Passwords have at least 14 characters."), ("3.2 Devices", "Laptops are encrypted.")]),
]


@pytest.fixture(scope="module")
def loader(tmp_path_factory):
    home = tmp_path_factory.mktemp("mineru-home")
    loader = DocumentLoader(MinerUOptions(home=str(home), timeout=120), max_file_bytes=2 * 1024 * 1024)
    yield loader
    loader.close()


def load(loader: DocumentLoader, path: Path):
    return loader.load(path, path.name, path.read_bytes())


def make_pdf(path: Path) -> None:
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate

    styles = getSampleStyleSheet()
    story = [Paragraph("Employee Handbook", styles["Title"])]
    for chapter, sections in SECTIONS:
        story.append(Paragraph(chapter, styles["Heading1"]))
        for heading, body in sections:
            story.append(Paragraph(heading, styles["Heading2"]))
            story.append(Paragraph((body + " ") * 6, styles["BodyText"]))
        story.append(PageBreak())
    SimpleDocTemplate(str(path), pagesize=A4).build(story)


def test_multi_page_pdf_keeps_pages_and_heading_hierarchy(loader, tmp_path):
    pdf = tmp_path / "handbook.pdf"
    make_pdf(pdf)
    doc = load(loader, pdf)
    assert doc.title == "Employee Handbook"
    assert doc.parser == "mineru-flash"
    headings = {b.text: (b.level, b.page) for b in doc.blocks if b.kind == "heading"}
    assert headings["1 Travel"][1] == 1 and headings["2 Leave"][1] == 2 and headings["3 Security"][1] == 3
    assert headings["1.1 Booking"][0] == headings["1 Travel"][0] + 1, "numbering gives the depth"
    chunks = Chunker().chunk(doc)
    meals = next(c for c in chunks if "45 EUR" in c.text)
    assert meals.heading_path == ("1 Travel", "1.2 Meals") and meals.page == 1
    sick = next(c for c in chunks if "before 10:00" in c.text)
    assert sick.heading_path == ("2 Leave", "2.2 Sick leave") and sick.page == 2


def test_docx_headings_lists_and_tables(loader, tmp_path):
    import docx

    document = docx.Document()
    document.add_heading("Annual Leave Policy", level=0)
    document.add_heading("Entitlement", level=1)
    document.add_paragraph("Full-time employees receive 26 working days of paid annual leave.")
    document.add_heading("Long service", level=2)
    document.add_paragraph("After five years, two extra days.", style="List Bullet")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Years", "Days"
    table.cell(1, 0).text, table.cell(1, 1).text = "5", "28"
    path = tmp_path / "leave.docx"
    document.save(str(path))
    doc = load(loader, path)
    assert doc.title == "Annual Leave Policy"
    chunks = Chunker().chunk(doc)
    entitlement = next(c for c in chunks if "26 working days" in c.text)
    assert entitlement.heading_path == ("Entitlement",)
    long_service = next(c for c in chunks if "two extra days" in c.text)
    assert long_service.heading_path == ("Entitlement", "Long service")
    assert "| Years | Days |" in long_service.text and "| 5 | 28 |" in long_service.text
    assert all("**" not in b.text for b in doc.blocks if b.kind == "heading")


def test_html_headings(loader, tmp_path):
    path = tmp_path / "office.html"
    path.write_text(
        "<html><head><title>Office</title></head><body><h1>Office Guide</h1><p>Intro.</p>"
        "<h2>Parking</h2><p>Spaces are assigned by lottery every quarter.</p>"
        "<h3>Bicycles</h3><p>Bicycle parking is on the ground floor.</p></body></html>",
        encoding="utf-8",
    )
    doc = load(loader, path)
    chunks = Chunker().chunk(doc)
    bikes = next(c for c in chunks if "Bicycle parking" in c.text)
    assert doc.title == "Office Guide"
    assert bikes.heading_path == ("Parking", "Bicycles")


def test_sample_handbook_spreadsheet_and_slides(loader):
    handbook = Path(__file__).resolve().parents[3] / "examples" / "handbook"
    sheet = load(loader, handbook / "public-holidays-2026.xlsx")
    assert any(b.kind == "table" and "Christmas Day" in b.text for b in sheet.blocks)
    slides = load(loader, handbook / "benefits-2026.pptx")
    pages = {b.text: b.page for b in slides.blocks if b.kind == "heading"}
    assert pages["Learning budget"] == 3, "slides are pages"


def test_a_spreadsheet_passage_is_cited_by_its_sheet_and_rows(loader, tmp_path):
    """Two passages of one table were both cited `[1][2] public holidays 2026`: each names its sheet and the
    rows it holds, as the sheet numbers them (a blank row and a hidden sheet count as the sheet counts)."""
    import openpyxl

    book = openpyxl.Workbook()
    book.active.title = "Internal"
    book.active.append(["secret", "column"])
    book.active.sheet_state = "hidden"
    holidays = book.create_sheet("Holidays 2026")
    holidays.append(["Date", "Holiday", "Office"])
    for day in range(1, 41):
        holidays.append([f"2026-03-{day % 28 + 1:02d}", f"Company holiday number {day}", "All offices"])
        if day == 20:
            holidays.append([])  # row 22 is left blank
    offices = book.create_sheet("Offices")
    offices.append(["Office", "City"])
    offices.append(["HQ", "Lisbon"])
    path = tmp_path / "leave-calendar.xlsx"
    book.save(str(path))
    doc = load(loader, path)
    chunks = Chunker().chunk(doc)
    footnotes = [Citation(1, c).footnote.split(" · ")[0] for c in chunks]
    assert doc.title == "leave calendar" and len(footnotes) == len(set(footnotes)) > 2, footnotes
    assert footnotes[0].startswith("[1] leave calendar › Holidays 2026, rows 1–")
    assert footnotes[-1] == "[1] leave calendar › Offices, rows 1–2"
    last = next(c for c in chunks if "number 40 " in c.text)
    assert last.row_end == 42 and "secret" not in " ".join(c.text for c in chunks)


def test_markdown_front_matter_sets_title_version_and_date(loader, tmp_path):
    path = tmp_path / "travel.md"
    path.write_text("---\ntitle: Travel Policy\nversion: 2026-11-02\nurl: https://intranet.example/travel\n---\n"
                    "# Travel\n\nMeals are 45 EUR a day.\n", encoding="utf-8")
    doc = load(loader, path)
    assert (doc.title, doc.version, doc.modified, doc.url) == (
        "Travel Policy", "2026-11-02", "2026-11-02", "https://intranet.example/travel")


def test_date_in_file_name_and_gb18030_text(loader, tmp_path):
    path = tmp_path / "道路交通安全法实施条例(2017-10-07).txt"
    path.write_bytes("# 道路交通安全法实施条例\n\n第一条 根据道路交通安全法制定本条例。\n".encode("gb18030"))
    doc = load(loader, path)
    assert doc.modified == "2017-10-07"
    assert doc.blocks[1].text.startswith("第一条")


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("empty.pdf", b"", "empty file"),
        ("empty.md", b"", "empty file"),
        ("random.pdf", os.urandom(4096), "not a valid .pdf file"),
        ("broken.pdf", b"%PDF-1.7\n" + b"\x00garbage" * 200, "corrupt PDF"),
        ("notes.docx", b"just some plain text, not a word document\n" * 20, "not a valid .docx file"),
        ("binary.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + os.urandom(512), "binary content"),
        ("headings-only.md", b"# Title\n\n## Section\n", "no text found"),
    ],
)
def test_bad_files_are_skipped_with_a_reason(loader, tmp_path, name, content, reason):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(SkipFile) as caught:
        load(loader, path)
    assert reason in caught.value.reason


def test_oversized_file_is_skipped(loader, tmp_path):
    path = tmp_path / "huge.md"
    path.write_bytes(b"# Big\n\n" + b"word " * 600_000)
    with pytest.raises(SkipFile, match="too large"):
        load(loader, path)


def test_an_html_file_over_the_html_limit_is_skipped_before_it_is_parsed(tmp_path):
    path = tmp_path / "export.html"
    path.write_bytes(b"<html><body><h1>Export</h1>" + b"<p>row of the export</p>" * 8_000 + b"</body></html>")
    loader = DocumentLoader(MinerUOptions(home=str(tmp_path / "mineru")), max_html_bytes=2**17)
    with pytest.raises(SkipFile) as caught:
        load(loader, path)
    assert caught.value.reason == "too large for HTML (0.2 MB > 0.125 MB limit, AIE_MAX_HTML_MB)"


def test_encrypted_pdf_is_skipped(loader, tmp_path):
    from pypdf import PdfReader, PdfWriter

    plain = tmp_path / "plain.pdf"
    make_pdf(plain)
    writer = PdfWriter()
    for page in PdfReader(str(plain)).pages:
        writer.add_page(page)
    writer.encrypt(user_password="secret", owner_password="owner")
    locked = tmp_path / "locked.pdf"
    with open(locked, "wb") as out:
        writer.write(out)
    with pytest.raises(SkipFile, match="encrypted"):
        load(loader, locked)


def test_scanned_pdf_needs_ocr_without_a_mineru_server(loader, tmp_path):
    from PIL import Image, ImageDraw
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    image = Image.new("RGB", (800, 1000), "white")
    ImageDraw.Draw(image).text((50, 50), "Scanned policy page", fill="black")
    image_path = tmp_path / "scan.png"
    image.save(image_path)
    pdf = tmp_path / "scan.pdf"
    page = canvas.Canvas(str(pdf), pagesize=A4)
    page.drawImage(str(image_path), 0, 0, width=A4[0], height=A4[1])
    page.save()
    with pytest.raises(SkipFile, match="needs OCR"):
        load(loader, pdf)
    with pytest.raises(SkipFile, match="needs OCR"):
        load(loader, image_path)


def test_mineru_content_list_folder_is_ingested_with_its_pages(loader, tmp_path):
    items = [
        {"type": "header", "text": "ACME - Internal", "page_idx": 0},
        {"type": "text", "text": "Quarterly Report", "text_level": 1, "page_idx": 0},
        {"type": "text", "text": "1 Revenue", "text_level": 1, "page_idx": 0},
        {"type": "text", "text": "Revenue grew by 12 percent compared with the previous quarter.", "page_idx": 0},
        {"type": "header", "text": "ACME - Internal", "page_idx": 1},
        {"type": "text", "text": "1.1 By region", "text_level": 1, "page_idx": 1},
        {"type": "table", "table_body": "<table><tr><td>Region</td><td>Growth</td></tr><tr><td>EMEA</td><td>15%</td></tr></table>",
         "table_caption": ["Table 1: growth by region"], "page_idx": 1},
        {"type": "page_number", "text": "2", "page_idx": 1},
    ]
    folder = tmp_path / "report" / "auto"
    folder.mkdir(parents=True)
    path = folder / "report_content_list.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    doc = load(loader, path)
    assert doc.parser == "mineru-content-list"
    chunks = Chunker().chunk(doc)
    region = next(c for c in chunks if "EMEA" in c.text)
    assert region.heading_path == ("1 Revenue", "1.1 By region")
    assert region.page == 2
    assert "| Region | Growth |" in region.text and "Table 1: growth by region" in region.text
    assert not any("ACME - Internal" in c.text for c in chunks), "running headers are dropped"


def test_mineru_4_output_folder_is_ingested(loader, tmp_path):
    import docx
    from mineru import parse

    document = docx.Document()
    document.add_heading("Security Basics", level=0)
    document.add_heading("Passwords", level=1)
    document.add_paragraph("Use at least 14 characters.")
    source = tmp_path / "security.docx"
    document.save(str(source))
    out = tmp_path / "parsed"
    out.mkdir()
    (out / "middle_json.json").write_text(parse(str(source), tier="flash").to_json(), encoding="utf-8")
    doc = load(loader, out / "middle_json.json")
    chunks = Chunker().chunk(doc)
    assert doc.parser == "mineru-output"
    assert chunks[0].heading_path == ("Passwords",) and "14 characters" in chunks[0].text


def test_scans_are_sent_to_a_configured_mineru_server(tmp_path):
    """A real `mineru-api` server (flash tier only here: no OCR models offline) receives the scan;
    its refusal comes back as the skip reason, while text PDFs still parse locally."""
    import subprocess
    import sys

    from tests.processes import free_port, wait_until_up

    port = free_port()
    env = dict(os.environ, MINERU_HOME=str(tmp_path / "server-home"), MINERU_MODEL_SOURCE="local")
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("mineru-api")), "--tier", "flash", "--host", "127.0.0.1", "--port", str(port),
         # Without it mineru-api keeps its uploads (blobs/, a lock file) in the working directory.
         "--upload-dir", str(tmp_path / "server-uploads")],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    try:
        wait_until_up(f"http://127.0.0.1:{port}/v1/health", process=server, timeout=60)
        options = MinerUOptions(home=str(tmp_path / "home"), server_url=f"http://127.0.0.1:{port}", timeout=120)
        with_server = DocumentLoader(options)
        try:
            scan = tmp_path / "scan.png"
            from PIL import Image

            Image.new("RGB", (400, 300), "white").save(scan)
            with pytest.raises(SkipFile, match="MinerU server could not parse it: .*tier"):
                load(with_server, scan)
            pdf = tmp_path / "text.pdf"
            make_pdf(pdf)
            assert load(with_server, pdf).parser == "mineru-flash"
        finally:
            with_server.close()
    finally:
        os.killpg(server.pid, 15)
        server.wait(20)


# The version and date in a footnote are the document's own ------------------------------------------------


def footnote(doc) -> str:
    from rag.types import Citation

    return Citation(1, Chunker().chunk(doc)[0]).footnote


def old_mtime(path: Path, day: str = "2020-01-02") -> None:
    """Give a file a file time the document's own metadata must win over."""
    from datetime import datetime, timezone

    stamp = datetime.fromisoformat(day).replace(hour=12, tzinfo=timezone.utc).timestamp()
    os.utime(path, (stamp, stamp))


def test_docx_core_properties_give_version_and_date(loader, tmp_path):
    from datetime import datetime

    import docx

    document = docx.Document()
    document.add_heading("Expense Policy", level=0)
    document.add_heading("Meals", level=1)
    document.add_paragraph("The daily meal allowance is 45 EUR on business trips.")
    document.core_properties.version = "3.1"
    document.core_properties.revision = 12
    document.core_properties.modified = datetime(2026, 3, 1, 9, 30)
    path = tmp_path / "expenses.docx"
    document.save(str(path))
    old_mtime(path)
    doc = load(loader, path)
    assert (doc.version, doc.modified, doc.date_source) == ("3.1", "2026-03-01", "document")
    assert footnote(doc) == "[1] Expense Policy › Meals · v3.1 · 2026-03-01"


def test_docx_revision_is_the_version_when_none_is_declared(loader, tmp_path):
    from datetime import datetime

    import docx

    document = docx.Document()
    document.add_heading("Leave", level=1)
    document.add_paragraph("Employees receive 26 days of annual leave every calendar year.")
    document.core_properties.revision = 7
    document.core_properties.modified = datetime(2025, 12, 24, 18, 0)
    path = tmp_path / "leave.docx"
    document.save(str(path))
    doc = load(loader, path)
    assert footnote(doc) == "[1] Leave · v7 · 2025-12-24"


def test_blank_template_properties_are_not_the_documents_date(loader, tmp_path):
    """python-docx and python-pptx leave their templates' 2013 dates in files that never set them:
    those say nothing about the document, so its file time is used (and no revision "1" as version)."""
    import docx
    import pptx

    document = docx.Document()
    document.add_heading("Parking", level=1)
    document.add_paragraph("Spaces are assigned by lottery every quarter.")
    word = tmp_path / "parking.docx"
    document.save(str(word))
    old_mtime(word, "2024-05-06")
    presentation = pptx.Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    slide.shapes.title.text = "Benefits"
    slide.placeholders[1].text = "Every employee has a learning budget of 1000 EUR a year."
    slides = tmp_path / "benefits.pptx"
    presentation.save(str(slides))
    old_mtime(slides, "2024-05-07")
    for path, day in ((word, "2024-05-06"), (slides, "2024-05-07")):
        doc = load(loader, path)
        assert (doc.version, doc.modified, doc.date_source) == ("", day, "file time"), path.name
        assert footnote(doc).endswith(f" · {day}") and "2013" not in footnote(doc)


def test_a_version_set_on_a_file_with_template_dates_is_kept(loader, tmp_path):
    """Only the template's stamps are ignored: a revision the author set stays the version, and the date falls
    back to the file time as for any file without one."""
    import docx

    document = docx.Document()
    document.add_heading("Parking", level=1)
    document.add_paragraph("Spaces are assigned by lottery every quarter.")
    document.core_properties.revision = 4
    word = tmp_path / "parking.docx"
    document.save(str(word))
    old_mtime(word, "2024-05-06")
    doc = load(loader, word)
    assert (doc.version, doc.modified, doc.date_source) == ("4", "2024-05-06", "file time")
    assert footnote(doc).endswith(" · v4 · 2024-05-06")


def test_pptx_and_xlsx_core_properties(loader, tmp_path):
    from datetime import datetime

    import openpyxl
    import pptx

    presentation = pptx.Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    slide.shapes.title.text = "Learning budget"
    slide.placeholders[1].text = "Every employee has a learning budget of 1000 EUR a year."
    presentation.core_properties.version = "2026.2"
    presentation.core_properties.modified = datetime(2026, 2, 14, 8, 0)
    slides = tmp_path / "benefits.pptx"
    presentation.save(str(slides))
    old_mtime(slides)
    doc = load(loader, slides)
    assert footnote(doc) == "[1] Learning budget, p. 1 · v2026.2 · 2026-02-14"

    book = openpyxl.Workbook()
    book.active.append(["Holiday", "Date"])
    book.active.append(["Christmas Day", "2026-12-25"])
    book.properties.version = "4"
    book.properties.title = "Public Holidays"
    sheet = tmp_path / "holidays.xlsx"
    book.save(str(sheet))  # openpyxl stamps `modified` with the time of saving
    old_mtime(sheet)
    doc = load(loader, sheet)
    saved = datetime.utcnow().date().isoformat()
    assert (doc.version, doc.modified, doc.date_source) == ("4", saved, "document")
    assert footnote(doc).endswith(f" · v4 · {saved}")


def pdf_with_metadata(tmp_path, name: str, metadata: dict[str, str]):
    """A text PDF carrying `metadata` in its Info dictionary, with an old file time."""
    from pypdf import PdfReader, PdfWriter

    plain = tmp_path / "plain.pdf"
    make_pdf(plain)
    writer = PdfWriter()
    for page in PdfReader(str(plain)).pages:
        writer.add_page(page)
    writer.add_metadata(metadata)
    path = tmp_path / name
    with open(path, "wb") as out:
        writer.write(out)
    old_mtime(path)
    return path


def test_pdf_info_dictionary_gives_version_and_date(loader, tmp_path):
    path = pdf_with_metadata(tmp_path, "handbook.pdf", {
        "/Title": "Handbook", "/ModDate": "D:20250704101500+02'00'", "/CreationDate": "D:20240101000000Z",
        "/Version": "5"})
    doc = load(loader, path)
    assert (doc.version, doc.modified, doc.date_source) == ("5", "2025-07-04", "document")
    assert doc.title == "Handbook", "the declared title wins over the heading the PDF opens with"
    assert footnote(doc) == "[1] Handbook › 1 Travel › 1.1 Booking, p. 1 · v5 · 2025-07-04"


def test_pdf_without_a_modification_date_uses_its_creation_date(loader, tmp_path):
    doc = load(loader, pdf_with_metadata(tmp_path, "created.pdf", {"/CreationDate": "D:20240917"}))
    assert (doc.version, doc.modified) == ("", "2024-09-17")
    assert footnote(doc).endswith(", p. 1 · 2024-09-17")


def expense_policy_pdf(path: Path, heading_style: str) -> None:
    """Metadata title "Expense Policy"; page 1 a client-dinner section, page 2 a heading "3. Mileage"."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate

    styles = getSampleStyleSheet()
    story = [
        Paragraph("2. Client dinners", styles[heading_style]),
        Paragraph("A client dinner may cost up to 80 EUR per guest, with the receipt and the names. " * 3,
                  styles["BodyText"]),
        PageBreak(),
        Paragraph("3. Mileage", styles["Heading1"]),
        Paragraph("Driving your own car on business is paid at 0.30 EUR per kilometre. " * 3, styles["BodyText"]),
    ]
    SimpleDocTemplate(str(path), pagesize=A4, title="Expense Policy").build(story)


@pytest.mark.parametrize("heading_style", ["BodyText", "Heading1"])
def test_pdf_declared_title_wins_and_headings_stay_on_their_pages(loader, tmp_path, heading_style):
    path = tmp_path / "expenses.pdf"
    expense_policy_pdf(path, heading_style)
    doc = load(loader, path)
    assert doc.title == "Expense Policy"
    chunks = Chunker().chunk(doc)
    assert {c.title for c in chunks} == {"Expense Policy"}
    dinner = next(c for c in chunks if "client dinner" in c.text)
    assert "Mileage" not in Citation(1, dinner).footnote
    assert Citation(1, dinner).footnote.startswith("[1] Expense Policy")
    assert dinner.page == 1
    mileage = next(c for c in chunks if "0.30 EUR" in c.text)
    assert mileage.heading_path[-1] == "3. Mileage" and mileage.page == 2
    assert "Client dinners" not in " ".join(mileage.heading_path), "sibling sections do not nest"
    assert Citation(1, mileage).footnote.startswith("[1] Expense Policy › 3. Mileage, p. 2")


def test_pdf_placeholder_title_and_later_headings_do_not_name_the_document(loader, tmp_path):
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate

    styles = getSampleStyleSheet()
    path = tmp_path / "car_rules.pdf"
    story = [Paragraph("Book the car through the portal. " * 4, styles["BodyText"]),
             Paragraph("3. Mileage", styles["Heading1"]), Paragraph("Paid per kilometre. " * 4, styles["BodyText"])]
    SimpleDocTemplate(str(path)).build(story)  # reportlab's own placeholder title
    assert load(loader, path).title == "car rules"


def test_html_meta_gives_version_and_date(loader, tmp_path):
    path = tmp_path / "office.html"
    path.write_text(
        "<html><head><title>Office</title><meta name=\"version\" content=\"2.4\">"
        "<meta property=\"article:modified_time\" content=\"2026-05-20T08:00:00+00:00\">"
        "<meta name=\"date\" content=\"2025-01-01\"></head>"
        "<body><h1>Office Guide</h1><h2>Parking</h2><p>Spaces are assigned by lottery every quarter.</p></body></html>",
        encoding="utf-8",
    )
    old_mtime(path)
    doc = load(loader, path)
    assert (doc.version, doc.modified, doc.date_source) == ("2.4", "2026-05-20", "document")
    assert footnote(doc) == "[1] Office Guide › Parking · v2.4 · 2026-05-20"


def test_markdown_without_front_matter_shows_its_file_time_and_no_hash(loader, tmp_path):
    path = tmp_path / "parking.md"
    path.write_text("# Parking\n\nSpaces are assigned by lottery every quarter.\n", encoding="utf-8")
    old_mtime(path, "2023-08-09")
    doc = load(loader, path)
    assert (doc.version, doc.modified, doc.date_source) == ("", "2023-08-09", "file time")
    assert footnote(doc) == "[1] Parking · 2023-08-09"


def test_markdown_front_matter_version_and_separate_date(loader, tmp_path):
    path = tmp_path / "travel.md"
    path.write_text("---\ntitle: Travel Policy\nversion: 3\nupdated: 2026/3/1\n---\n# Meals\n\nMeals are 45 EUR a day.\n",
                    encoding="utf-8")
    doc = load(loader, path)
    assert footnote(doc) == "[1] Travel Policy › Meals · v3 · 2026-03-01"


def test_the_builder_passes_the_commit_date_as_fallback(loader, tmp_path):
    from rag.parsing.loader import FileDate

    path = tmp_path / "notes.md"
    path.write_text("# Notes\n\nThe canteen opens at noon on working days.\n", encoding="utf-8")
    doc = loader.load(path, path.name, path.read_bytes(), fallback_date=FileDate("2022-02-02", "git"))
    assert (doc.modified, doc.date_source) == ("2022-02-02", "git")
    dated = tmp_path / "notes.md"
    dated.write_text("---\ndate: 2021-01-01\n---\n# Notes\n\nThe canteen opens at noon.\n", encoding="utf-8")
    doc = loader.load(dated, dated.name, dated.read_bytes(), fallback_date=FileDate("2022-02-02", "git"))
    assert (doc.modified, doc.date_source) == ("2021-01-01", "document"), "the document's own date comes first"


def test_a_mineru_server_quoting_the_key_it_was_sent_never_puts_it_in_the_skip_reason(tmp_path):
    """The skip reason is posted with the reindex report where the reindex was asked for; a server or a gateway
    in front of it may answer an error with the Authorization header it got."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from PIL import Image

    class Quoting(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.dumps({"detail": f"rejected {self.headers.get('Authorization')}"}).encode()
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Quoting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    options = MinerUOptions(home=str(tmp_path / "home"), server_url=f"http://127.0.0.1:{server.server_address[1]}",
                            server_api_key="mk-scan-key-4471", timeout=30)
    loader = DocumentLoader(options)
    try:
        scan = tmp_path / "scan.png"
        Image.new("RGB", (400, 300), "white").save(scan)
        with pytest.raises(SkipFile) as skipped:
            load(loader, scan)
    finally:
        loader.close()
        server.shutdown()
    assert "MinerU server could not parse it" in str(skipped.value) and "HTTP 500" in str(skipped.value)
    assert "mk-scan-key-4471" not in str(skipped.value) and "Bearer ***" in str(skipped.value)


@pytest.mark.parametrize("text", [
    "---\ntitle: Board minutes\naccess: [U0CEO]\n# Board minutes\n\nThe board approved the layoffs.\n",
    "---\naccess: [U0CEO]\n...\n# Board minutes\n\nThe board approved the layoffs.\n",  # YAML's end mark
])
def test_front_matter_that_names_an_access_list_but_is_not_closed_skips_the_file(loader, tmp_path, text):
    """Read as text, the `access:` line was a sentence of the body and the document everyone's."""
    path = tmp_path / "minutes.md"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SkipFile, match="front matter names an access list but is not closed"):
        load(loader, path)


def test_front_matter_after_blank_lines_is_still_front_matter(loader, tmp_path):
    path = tmp_path / "minutes.md"
    path.write_text("\n\n---\naccess: [U0CEO]\n---\n# Board minutes\n\nThe board approved the layoffs.\n",
                    encoding="utf-8")
    doc = load(loader, path)
    assert doc.access == ("u0ceo",) and "access" not in " ".join(b.text for b in doc.blocks)
