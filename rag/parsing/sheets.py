"""A workbook's sheets as its footnotes name them: each visible sheet's name, and the number the sheet gives
each row that holds something, so that a spreadsheet passage is cited as `… › Holidays 2026, rows 2–7`.

MinerU gives a workbook's tables one "page" per visible sheet, but names the sheets only when there are
several, and numbers no row. Read here from the package itself (in the parser's child process, after the
zip limits were checked): xl/workbook.xml, its relationships, and each sheet's <row> elements."""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from xml.etree import ElementTree

from rag.parsing.mineru_blocks import html_table_to_markdown

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PACKAGE_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_HIDDEN = {"hidden", "veryHidden"}
SHEET_LEVEL = 2  # the heading level MinerU gives a sheet's name


@dataclass(frozen=True)
class Sheet:
    name: str
    rows: list[int]  # the numbers of the rows that hold a value, in order


def visible_sheets(path: Path) -> list[Sheet]:
    """The workbook's visible sheets in order (MinerU leaves hidden ones out)."""
    with zipfile.ZipFile(path) as package:
        workbook = ElementTree.fromstring(package.read("xl/workbook.xml"))
        targets = _targets(package)
        sheets = []
        for sheet in workbook.iter(f"{_MAIN}sheet"):
            if sheet.get("state") in _HIDDEN:
                continue
            part = targets.get(sheet.get(f"{_REL}id", ""))
            rows = _filled_rows(package, part) if part in package.namelist() else []
            sheets.append(Sheet(sheet.get("name", ""), rows))
        return sheets


def _targets(package: zipfile.ZipFile) -> dict[str, str]:
    """The workbook's relationship ids and the parts they name."""
    relations = ElementTree.fromstring(package.read("xl/_rels/workbook.xml.rels"))
    found = {}
    for relation in relations.iter(f"{_PACKAGE_REL}Relationship"):
        target = relation.get("Target", "")
        part = target.lstrip("/") if target.startswith("/") else str(PurePosixPath("xl") / target)
        found[relation.get("Id", "")] = part
    return found


def _filled_rows(package: zipfile.ZipFile, part: str) -> list[int]:
    """The numbers of the sheet's rows that hold a value (read as a stream: a sheet may be large)."""
    rows, number = [], 0
    with package.open(part) as stream:
        for _, element in ElementTree.iterparse(stream):
            if element.tag != f"{_MAIN}row":
                continue
            number = int(element.get("r") or number + 1)  # `r` may be left out: the row after the last
            if any((value.text or "").strip() for value in element.iter()
                   if value.tag in (f"{_MAIN}v", f"{_MAIN}t")):
                rows.append(number)
            element.clear()
    return rows


def with_sheets(items: list[dict[str, Any]], sheets: list[Sheet]) -> list[dict[str, Any]]:
    """MinerU's content list of a workbook with each table's `rows` (its rows' numbers in the sheet) where its
    rows are the sheet's filled ones, in order (a sheet whose tables do not match them keeps its tables
    unnumbered), and, in a workbook of several sheets, each sheet's name as a heading above its tables where
    MinerU gave none. (A single sheet's name stays out: the workbook's title says where its rows are, and a
    heading would change what its passages are searched by.)"""
    out: list[dict[str, Any]] = []
    for index, sheet in enumerate(sheets):
        page = [item for item in items if item.get("page_idx", 0) == index]
        if len(sheets) > 1 and not any(item.get("type") == "text" and item.get("text_level")
                                       and item.get("text") == sheet.name for item in page):
            out.append({"type": "text", "text": sheet.name, "text_level": SHEET_LEVEL, "page_idx": index})
        out.extend(_numbered(page, sheet.rows))
    pages = range(len(sheets))
    return out + [item for item in items if item.get("page_idx", 0) not in pages]


def _numbered(page: list[dict[str, Any]], rows: list[int]) -> list[dict[str, Any]]:
    """A sheet's items, its tables given their rows' numbers in turn when they hold exactly the sheet's rows."""
    counts = [_row_count(item) for item in page if item.get("type") == "table"]
    if sum(counts) != len(rows):
        return page
    numbered, taken = [], 0
    for item in page:
        if item.get("type") == "table":
            count = _row_count(item)
            item = {**item, "rows": rows[taken:taken + count]}
            taken += count
        numbered.append(item)
    return numbered


def _row_count(item: dict[str, Any]) -> int:
    """The rows of a table item as its Markdown will have them (rows without text dropped)."""
    table = html_table_to_markdown(item.get("table_body") or "")
    return table.count("\n") if table else 0  # the lines, less the header's rule
