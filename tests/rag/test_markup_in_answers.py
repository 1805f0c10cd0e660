"""Documents written with markup — HTML blocks, template directives, entities, code — answered on the embedded
default (real index): what a reader is quoted is their prose, a code block only whole, and a document is named
by its own title."""

from __future__ import annotations

import pytest

from tests.conftest import built_index
from tests.rag.judging.test_extractive import ask, quoted

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
SETUP = """# 准备工作

## Java

* 服务端：Java 17 及以上
* 客户端：Java 1.8 及以上

配置好后，可以通过如下命令检查：

```sh
java -version
```

样例输出：

```sh
java version "17.0.14"
Java(TM) SE Runtime Environment (build 17.0.14+7)
Java HotSpot(TM) 64-Bit Server VM (build 17.0.14+7, mixed mode)
```
"""


@pytest.fixture(scope="module")
def documents(shared_data_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("markup-docs")
    (folder / "remote.md").write_text(REMOTE, encoding="utf-8")
    (folder / "client.md").write_text(CLIENT, encoding="utf-8")
    (folder / "setup.md").write_text(SETUP, encoding="utf-8")
    return built_index(shared_data_dir, tmp_path_factory, "markup-index", [folder])


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


def test_a_question_asking_for_no_code_is_answered_from_the_prose_not_the_code_beside_it(documents):
    for question in ("客户端需要哪个版本的 Java？", "Which Java version does the server need?"):
        answer = ask(documents, question)
        assert "Java 1.8 及以上" in quoted(answer) and "```" not in answer.text, question
    command = quoted(ask(documents, "检查 Java 版本的命令是什么？")).splitlines()
    assert "> java -version" in command


def test_a_chinese_guide_full_of_commands_and_names_is_introduced_as_chinese(documents):
    asked_in_chinese = ask(documents, "客户端需要哪个版本的 Java？").text
    assert "摘自英文文档" not in asked_in_chinese and "Java 1.8 及以上" in asked_in_chinese
    asked_in_english = ask(documents, "Which Java version does the server need?").text.splitlines()
    assert "From the Chinese document “准备工作”:" in asked_in_english
