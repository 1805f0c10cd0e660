"""Links in answers lead only to the sources' own URLs, whatever form they take, streamed or not."""

from hypothesis import given, settings, strategies as st

from rag.safety.links import LinkFilter, keep_cited, safe_url, source_urls, unlink

WIKI = source_urls(["https://wiki.example/travel", None, "javascript:alert(1)"])


def test_only_http_urls_of_sources_are_allowed():
    assert WIKI == source_urls(["HTTPS://Wiki.Example/travel/#meals"]), "case, trailing slash and anchor do not matter"
    assert unlink("[x](javascript:alert(1))", WIKI) == "x", "a source's javascript: URL is no source URL"


def test_every_link_form_to_elsewhere_keeps_its_text_and_loses_its_link():
    cases = {
        "See [click here](https://evil.example/login) now.": "See click here (`evil.example`) now.",
        "![logo](https://evil.example/pixel.png)": "logo (`evil.example`)",
        "<https://evil.example/a> and <https://evil.example/b|the form>": "`https://evil.example/a` and the form (`evil.example`)",
        "reset at https://evil.example/reset?u=1. Or www.evil.example.": "reset at `https://evil.example/reset?u=1`. Or `www.evil.example`.",
        "[form]: https://evil.example/f\nuse the [form][form]": "form: `https://evil.example/f`\nuse the [form][form]",
        '<a href="https://evil.example">click</a>': "click",
        "[click\nhere](https://evil.example)": "click\nhere (`evil.example`)",
        "[outer [in](https://evil.example/1)](https://evil.example/2)": "outer in (`evil.example`) (`evil.example`)",
        "45 EUR [S1](https://evil.example).": "45 EUR [S1] (`evil.example`).",
        "[the bank](https://bаnk.example)": "the bank (`xn--bnk-6cd.example`)",
        "见https://evil.example/x。": "见`https://evil.example/x`。",
        "[Annex 2](annex2.md)": "Annex 2",
    }
    for text, plain in cases.items():
        assert unlink(text, WIKI) == plain, text


def test_links_to_a_source_stay_and_plain_text_is_untouched():
    text = ("Details on the [travel wiki](https://wiki.example/travel/) and https://wiki.example/travel#meals; "
            "<https://wiki.example/travel|wiki>. If a < b then [see below] (p. 3) [S1].")
    assert unlink(text, WIKI) == text
    already = "`https://evil.example/x` stays code"
    assert unlink(already, WIKI) == already
    nested = "[see [this](https://evil.example/x)](https://wiki.example/travel)"
    assert unlink(nested, WIKI) == "[see this (`evil.example`)](https://wiki.example/travel)", "the inner link would win"


def test_a_finished_answer_keeps_links_only_to_the_sources_it_cites():
    text = "Meals [1] on the [wiki](https://wiki.example/travel); hotels on [hr](https://hr.example/hotels) `https://evil.example`"
    kept = keep_cited(text, ["https://hr.example/hotels"], ["https://wiki.example/travel", "https://hr.example/hotels"])
    assert kept == "Meals [1] on the wiki (`wiki.example`); hotels on [hr](https://hr.example/hotels) `https://evil.example`"


_PIECES = st.sampled_from(["[", "]", "(", ")", "<", ">", "|", "!", ":", " ", "\n", "\n\n", "`", "click", "S1", "https://",
                           "evil.example", "/x", "wiki.example/travel", "www.", "a href=", "\"", ".", "。"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_PIECES, st.text(max_size=2)), max_size=30).map("".join), st.data())
def test_streamed_text_is_unlinked_exactly_as_the_whole(text, data):
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=12)))
    links, out, previous = LinkFilter(WIKI), "", 0
    for cut in [*cuts, len(text)]:
        out += links.feed(text[previous:cut])
        previous = cut
    assert out + links.flush() == unlink(text, WIKI)


def test_streamed_pieces_are_read_in_the_context_of_what_came_before():
    text = "see [a]: https://evil.example/x\n[b]: https://evil.example/y\n" + "[" + "long open text " * 300 + "](https://evil.example/z)"
    links = LinkFilter(WIKI)
    pieces = ["see ", "[a]: https://evil.example/x\n", "[b]: https://evil.example/y\n"]
    pieces += [text[len("".join(pieces)):][i : i + 4] for i in range(0, len(text) - len("".join(pieces)), 4)]
    assert "".join(pieces) == text
    streamed = "".join(links.feed(piece) for piece in pieces) + links.flush()
    assert streamed == unlink(text, WIKI)
    assert streamed.startswith("see [a]: `https://evil.example/x`\nb: `https://evil.example/y`\nlong open text")


def test_an_anchored_source_url_is_still_the_sources_own_page():
    """A footnote's URL points into its document (rag.index.anchors); the document is the source, so a
    link to it with another anchor, or none, stays, and the anchor does not make another page a source."""
    anchored = source_urls([
        "https://wiki.example/travel#:~:text=Meals%20are%20reimbursed,45%20EUR",
        "https://git.example/acme/handbook/blob/4f2a9c1/hr/r%C3%A8gles.md?plain=1#L12-L18",
        "https://code.example/acme/handbook/src/commit/4f2a9c1/hr/sick.md?display=source#L3-L4",
    ])
    own = ("See the [travel wiki](https://wiki.example/travel), its [meals](https://wiki.example/travel#meals), "
           "the [rules](https://git.example/acme/handbook/blob/4f2a9c1/hr/règles.md#L1) and "
           "https://code.example/acme/handbook/src/commit/4f2a9c1/hr/sick.md.")
    assert unlink(own, anchored) == own
    elsewhere = "The [same words](https://evil.example/travel#:~:text=Meals%20are%20reimbursed,45%20EUR) elsewhere."
    assert unlink(elsewhere, anchored) == "The same words (`evil.example`) elsewhere."
    other_query = "[search](https://git.example/acme/handbook/blob/4f2a9c1/hr/règles.md?q=1)"
    assert unlink(other_query, anchored) == "search (`git.example`)", "only the source-view parameter is ignored"


def test_a_cited_passage_keeps_links_to_its_document_whichever_of_its_places_they_open():
    meals = "https://wiki.example/travel#:~:text=Meals%20are%20reimbursed"
    hotels = "https://wiki.example/travel#:~:text=Hotels%20up%20to"
    visas = "https://wiki.example/visas#:~:text=Apply%20early"
    text = "On the [wiki](https://wiki.example/travel#:~:text=Hotels%20up%20to) and [visas](https://wiki.example/visas)."
    assert keep_cited(text, [meals], [meals, hotels, visas]) == \
        "On the [wiki](https://wiki.example/travel#:~:text=Hotels%20up%20to) and visas (`wiki.example`)."


def test_safe_url_gives_only_http_links_with_nothing_that_would_end_them_early():
    assert safe_url("https://wiki.example/a b|c>d<e\"f`g") == "https://wiki.example/a%20b%7Cc%3Ed%3Ce%22f%60g"
    assert safe_url(" https://wiki.example/x?a=1&b=2#:~:text=a%2Db ") == "https://wiki.example/x?a=1&b=2#:~:text=a%2Db"
    for bad in ("javascript:alert(1)", "data:text/html,x", "file:///etc/passwd", "https://", "//wiki.example/a",
                "https://wiki.example/a\r\nSet-Cookie: x", "", None):
        assert safe_url(bad) is None, bad
