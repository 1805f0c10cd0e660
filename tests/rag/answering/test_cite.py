from __future__ import annotations

from rag.answering.cite import CitedStream
from tests.rag.answering.conftest import pooled

INVENTED = "Passwords must be at least 14 characters long [S1]. The CEO is Alice Smith [S1]. See https://evil.example/x"


def test_markers_are_renumbered_as_the_text_streams_and_an_invented_sentence_cites_nothing(handbook):
    pipeline = handbook.pipeline()
    ctx = pooled(pipeline, "How long must a password be?")
    assert "14 characters" in ctx.sources[0].text
    stream = CitedStream(ctx.sources)
    shown = [stream.feed(INVENTED[n : n + 7]) for n in range(0, len(INVENTED), 7)] + [stream.flush()]
    assert "".join(shown) == stream.text and "[S1]" not in stream.text and "[1]" in stream.text
    assert "https://evil.example" not in stream.text.replace("`https://evil.example/x`", "")
    checked = pipeline.cite.run(ctx, stream, generative=True)
    assert checked.text.startswith("Passwords must be at least 14 characters long [1]. "
                                   "The CEO is Alice Smith (not found in the sources).")
    assert [c.chunk for c in checked.check.citations] == [ctx.sources[0]] and not checked.refused
    assert checked.check.uncited[0] == "The CEO is Alice Smith." and "citation_check" in ctx.timings
