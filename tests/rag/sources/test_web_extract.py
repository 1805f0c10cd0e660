"""A crawled page's main content (rag.sources.web_extract) and its name in the mirror (rag.sources.web_mirror)."""

from __future__ import annotations

import pytest

from rag.sources.web_extract import read_page
from rag.sources.web_mirror import Mirror, readable_name
from rag.sources.web_urls import CrawlBounds, normalize, parse_sitemap

MENU = ('<div class="top-menu"><a href="/docs/">Intranet home</a> | '
        '<a href="/docs/forms">Forms and templates</a></div>')
FOOTER = '<div id="footer">Example Corp, imprint and privacy notice</div>'


def test_a_page_of_plain_divs_keeps_its_headings_and_loses_its_menu():
    html = (f"<html><head><title>Expenses</title></head><body>{MENU}<div id='content'>"
            "<h2>Meals</h2><div>Meals on business trips are paid up to 60 euros a day, receipts attached.</div>"
            "<h2>Hotels</h2><div>Book hotels through the travel desk; <b>four stars</b> at most.</div>"
            "<ul><li>Invoices in the company's name</li><li>No minibar</li></ul>"
            f"<table><tr><th>City</th><th>Rate</th></tr><tr><td>Paris</td><td>180</td></tr></table></div>{FOOTER}"
            "</body></html>")

    markdown = read_page(html.encode(), "https://intranet.example.com/docs/expenses").markdown

    assert markdown.startswith("## Meals\n\nMeals on business trips are paid up to 60 euros a day")
    assert "## Hotels\n\nBook hotels through the travel desk; four stars at most." in markdown
    assert "- Invoices in the company's name\n\n- No minibar" in markdown
    assert "| City | Rate |\n|---|---|\n| Paris | 180 |" in markdown
    assert "Forms and templates" not in markdown and "imprint" not in markdown


def test_a_short_page_keeps_its_heading_without_the_site_header_and_footer():
    html = (f"<html><head><title>Contacts</title></head><body><header>{MENU}</header>"
            f"<main><h1>Contacts</h1><p>IT desk: extension 555.</p></main><footer>{FOOTER}</footer></body></html>")

    markdown = read_page(html.encode(), "https://intranet.example.com/docs/contacts").markdown

    assert markdown == "# Contacts\n\nIT desk: extension 555.\n"


def test_a_page_says_its_title_date_links_and_robots_directives():
    html = ("<html><head><meta charset='iso-8859-1'><title>Caf\xe9 rules</title>"
            "<meta name='dcterms.modified' content='2026-01-15'><meta name='robots' content='noindex, follow'>"
            "<base href='/docs/sub/'></head><body><main><h1>Caf\xe9</h1><p>Open 8 to 16.</p>"
            "<a href='menu#today'>menu</a> <a href='../up'>up</a> <a href='mailto:x@example.com'>mail</a></main>"
            "</body></html>").encode("iso-8859-1")

    page = read_page(html, "https://intranet.example.com/docs/cafe")

    assert (page.title, page.date) == ("Caf\xe9 rules", "2026-01-15")
    assert page.links == ["https://intranet.example.com/docs/sub/menu", "https://intranet.example.com/docs/up"]
    assert not page.index and page.follow
    assert "# Caf\xe9" in page.markdown


def test_urls_are_spelled_one_way():
    base = "https://Intranet.Example.com:443/docs/a/b"
    assert normalize("../c/./d?x=1#part", base) == "https://intranet.example.com/docs/c/d?x=1"
    assert normalize("%2e%2e/%2E%2E/etc", base) == "https://intranet.example.com/etc"
    assert normalize("javascript:alert(1)", base) is None
    assert normalize("https://user:secret@intranet.example.com/x", base) == "https://intranet.example.com/x"


def test_the_crawl_bounds_are_the_folder_of_the_sources_url():
    bounds = CrawlBounds.of("https://intranet.example.com/policies")
    assert bounds.contains("https://intranet.example.com/policies")
    assert bounds.contains("https://intranet.example.com/policies/travel")
    assert not bounds.contains("https://intranet.example.com/policies-old/travel")
    assert not bounds.contains("http://intranet.example.com/policies/travel")  # another scheme
    assert not bounds.wanted("https://intranet.example.com/policies/logo.png")


def test_names_are_readable_safe_and_short():
    bounds = CrawlBounds.of("https://intranet.example.com/policies/")
    def name(path: str, suffix: str = ".md") -> str:
        return readable_name(normalize(path, bounds.start), bounds, suffix)

    assert name("/policies/") == "index.md"
    assert name("/policies/Travel/Per-Diem.html") == "travel/per-diem.md"
    assert name("/policies/travel/") == "travel/index.md"
    assert name("/policies/forms/expense.report.pdf", ".pdf") == "forms/expense-report.pdf"
    assert name("/policies/Über uns/aux") == "uber-uns/aux-.md"
    assert name("/policies/list?page=2") == "list-page-2.md"
    long = name("/policies/" + "a" * 500)
    assert len(long) <= 160 and long.startswith("a" * 60) and long != name("/policies/" + "a" * 501)
    assert name("/policies/..%2f..%2fescape").endswith("escape.md") and ".." not in name("/policies/..%2f..%2fescape")


def test_the_mirror_refuses_a_name_outside_its_folder(tmp_path):
    mirror = Mirror(tmp_path / "pages")
    for bad in ("../outside.md", "/etc/passwd", "a/../../outside.md", ""):
        with pytest.raises(ValueError):
            mirror.path(bad)


def test_a_sitemap_and_a_sitemap_index_are_read_and_anything_else_is_not_one():
    urlset = (b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
              b"<url><loc> https://x/docs/a </loc><lastmod>2026-01-01</lastmod></url>"
              b"<url><loc>https://x/docs/b</loc></url></urlset>")
    index = (b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://x/s1.xml</loc>'
             b"</sitemap></sitemapindex>")
    evil = (b'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
            b"<urlset><url><loc>&e;</loc></url></urlset>")

    assert parse_sitemap(urlset).locations == ["https://x/docs/a", "https://x/docs/b"]
    assert parse_sitemap(index).is_index and parse_sitemap(index).locations == ["https://x/s1.xml"]
    assert parse_sitemap(b"<html><body>Not found</body></html>") is None
    assert "root:" not in "".join(parse_sitemap(evil).locations if parse_sitemap(evil) else [])


def test_a_page_wrapped_in_one_form_keeps_its_content():
    html = (f"<html><head><title>Onboarding</title></head><body><form id='aspnetForm'>{MENU}<div class='ms-body'>"
            "<h2>First day</h2><div>Collect your badge at the front desk at 9.</div>"
            f"<h2>First week</h2><div>Meet your buddy.</div></div>{FOOTER}</form></body></html>")

    markdown = read_page(html.encode(), "https://intranet.example.com/docs/onboarding").markdown

    assert "## First day\n\nCollect your badge at the front desk at 9." in markdown
    assert "## First week\n\nMeet your buddy." in markdown and "Forms and templates" not in markdown
