"""Links in answers lead only to the sources' own URLs, whatever form they take, streamed or not."""

from hypothesis import given, settings, strategies as st

from rag.links import LinkFilter, keep_cited, source_urls, unlink

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
