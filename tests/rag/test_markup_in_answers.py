"""Documents written with markup — HTML blocks, template directives, entities, code — answered on the embedded
default (real index): what a reader is quoted is their prose, a code block only whole, and a document is named
by its own title."""

from __future__ import annotations

import pytest

from ai_employee.wiring import KnowledgeBase
from rag.config import Settings
from rag.types import Answer
from tests.conftest import build
from tests.rag.test_extractive import ask

REMOTE = """# Remote work

<div class="note"><style>.note{width:100%;color:red}</style>
<p>You may work from home up to two days a week.</p></div>

<iframe src="https://calendar.example.com/embed"
  width="100%" height="600">
</iframe>

{% include callout.html %}

Ask your manager before your first day at home, and keep your team calendar up to date.
"""
CLIENT = """# &nbsp;
# 客户端配置

客户端默认每5分钟从服务端拉取一次最新配置，可以通过 `apollo.refreshInterval` 修改，单位为分钟。

获取配置的示例代码如下：

```java
Config config = ConfigService.getAppConfig();
String value = config.getProperty("timeout", "1000");
System.out.println(String.format("Value for key %s is %s", "timeout", value));
```
"""


@pytest.fixture(scope="module")
def documents(shared_data_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("markup-docs")
    (folder / "remote.md").write_text(REMOTE, encoding="utf-8")
    (folder / "client.md").write_text(CLIENT, encoding="utf-8")
    index_dir = tmp_path_factory.mktemp("markup-index")
    build(KnowledgeBase(Settings(data_dir=shared_data_dir, _env_file=None), index_dir), [folder])
    return shared_data_dir, index_dir


def quoted(answer: Answer) -> str:
    return "\n".join(line for line in answer.text.splitlines() if line.startswith(">"))


def test_the_text_of_an_html_block_is_quoted_without_its_style_frame_or_template_tags(documents):
    answer = ask(documents, "How many days a week can I work from home?")
    assert "two days a week" in quoted(answer)
    for markup in ("<", "width=", "height=", "{%", ".note"):
        assert markup not in answer.text, markup


def test_a_heading_that_is_an_entity_is_no_title_and_code_is_quoted_as_a_block(documents):
    answer = ask(documents, "获取配置的代码怎么写？")
    assert all(c.chunk.title == "客户端配置" for c in answer.citations)
    assert "&nbsp;" not in answer.text
    lines = quoted(answer).splitlines()
    assert "> ```java" in lines and "> Config config = ConfigService.getAppConfig();" in lines
