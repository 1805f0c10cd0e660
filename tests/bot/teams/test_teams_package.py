"""`ai-employee teams-package`: a zip Teams accepts — manifest.json valid against the Teams app schema 1.29
(../shared/teams-app-schema, every $ref resolved locally), the bot in personal chats, teams and group chats
with its `reindex` command, and the two icons at the sizes Teams wants."""

from __future__ import annotations

import json
import struct
import zipfile
import zlib

import jsonschema
from typer.testing import CliRunner

from ai_employee.cli import app
from tests.conftest import PROJECT

SCHEMA = PROJECT.parent / "shared" / "teams-app-schema" / "MicrosoftTeams.schema.json"
APP_ID = "6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f"


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and the RGBA rows of an 8-bit RGBA PNG without filters (what the package writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    assert (depth, colour) == (8, 6), "8-bit RGBA"
    idat, pos = b"", 8
    while pos < len(data):
        length, tag = struct.unpack(">I4s", data[pos:pos + 8])
        if tag == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = 1 + 4 * width
    return width, height, [raw[r * stride + 1:(r + 1) * stride] for r in range(height)]


def test_the_package_holds_a_valid_manifest_and_both_icons(tmp_path):
    out = tmp_path / "app.zip"
    result = CliRunner().invoke(app, ["teams-package", "--app-id", APP_ID, "--host", "bot.example.com",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    with zipfile.ZipFile(out) as package:
        assert sorted(package.namelist()) == ["color.png", "manifest.json", "outline.png"]
        manifest = json.loads(package.read("manifest.json"))
        color, outline = package.read("color.png"), package.read("outline.png")

    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(manifest), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]
    assert list(validator.iter_errors({**manifest, "id": "not-a-guid", "bots": [{"scopes": ["web"]}]})), \
        "the schema is really applied"
    assert manifest["manifestVersion"] == "1.29" and manifest["id"] == APP_ID
    [bot] = manifest["bots"]
    assert bot["botId"] == APP_ID and sorted(bot["scopes"]) == ["groupChat", "personal", "team"]
    assert {"reindex", "scope"} <= {c["title"] for lst in bot["commandLists"] for c in lst["commands"]}
    assert manifest["validDomains"] == ["bot.example.com"]
    assert manifest["developer"]["websiteUrl"] == "https://bot.example.com/"

    width, height, _ = png_pixels(color)
    assert (width, height) == (192, 192)
    width, height, rows = png_pixels(outline)
    pixels = {bytes(row[i:i + 4]) for row in rows for i in range(0, len(row), 4)}
    assert (width, height) == (32, 32) and pixels == {b"\xff\xff\xff\xff", b"\x00\x00\x00\x00"}, \
        "the outline icon is white on transparent"


def test_the_package_says_where_it_was_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AIE_DATA_DIR", str(tmp_path / "data"))
    here = CliRunner().invoke(app, ["teams-package", "--app-id", APP_ID, "--host", "bot.example.com"])
    assert here.exit_code == 0, here.output
    written = tmp_path.resolve() / "app.zip"
    assert (f"wrote {written} (in the current folder; --out writes it elsewhere): upload it in Teams"
            in " ".join(here.output.split())) and written.is_file()
    there = CliRunner().invoke(app, ["teams-package", "--app-id", APP_ID, "--host", "bot.example.com", "--out",
                                     "packages/teams.zip"])
    assert f"wrote {tmp_path.resolve() / 'packages' / 'teams.zip'}: upload" in " ".join(there.output.split())


def test_a_wrong_app_id_or_host_is_refused_with_a_clear_message(tmp_path):
    runner = CliRunner()
    wrong_id = runner.invoke(app, ["teams-package", "--app-id", "my-bot", "--out", str(tmp_path / "a.zip")])
    assert wrong_id.exit_code != 0 and "must be the bot's Microsoft App ID, a GUID" in wrong_id.output
    wrong_host = runner.invoke(app, ["teams-package", "--app-id", APP_ID, "--host", "https://bot.example.com/x",
                                     "--out", str(tmp_path / "b.zip")])
    assert wrong_host.exit_code != 0 and "--host is a host name" in wrong_host.output
    assert not (tmp_path / "a.zip").exists() and not (tmp_path / "b.zip").exists()


def test_the_package_names_the_real_host_and_your_own_privacy_and_terms_pages(tmp_path, monkeypatch):
    runner = CliRunner()
    monkeypatch.delenv("AIE_PUBLIC_URL", raising=False)
    nowhere = runner.invoke(app, ["teams-package", "--app-id", APP_ID, "--out", str(tmp_path / "a.zip")])
    assert nowhere.exit_code == 1 and "--host is needed (or AIE_PUBLIC_URL)" in nowhere.output
    assert not (tmp_path / "a.zip").exists(), "no package that points Teams at example.com"

    monkeypatch.setenv("AIE_PUBLIC_URL", "https://assistant.corp.example:8443/")
    defaults = runner.invoke(app, ["teams-package", "--app-id", APP_ID, "--out", str(tmp_path / "b.zip")])
    assert defaults.exit_code == 0, defaults.output
    assert "privacy and terms links point at https://assistant.corp.example:8443/ until" in defaults.output
    with zipfile.ZipFile(tmp_path / "b.zip") as package:
        manifest = json.loads(package.read("manifest.json"))
    assert manifest["validDomains"] == ["assistant.corp.example:8443"]

    own = runner.invoke(app, ["teams-package", "--app-id", APP_ID, "--host", "bot.example.com", "--out",
                              str(tmp_path / "c.zip"), "--privacy-url", "https://corp.example/privacy",
                              "--terms-url", "https://corp.example/terms"])
    assert own.exit_code == 0 and "warning" not in own.output, own.output
    with zipfile.ZipFile(tmp_path / "c.zip") as package:
        developer = json.loads(package.read("manifest.json"))["developer"]
    assert developer["privacyUrl"] == "https://corp.example/privacy"
    assert developer["termsOfUseUrl"] == "https://corp.example/terms"
    plain = runner.invoke(app, ["teams-package", "--app-id", APP_ID, "--host", "bot.example.com", "--out",
                                str(tmp_path / "d.zip"), "--privacy-url", "http://corp.example/privacy"])
    assert plain.exit_code == 1 and "--privacy-url is an https:// address" in plain.output


def test_suggested_questions_name_only_documents_everyone_may_read(tmp_path, monkeypatch):
    """The package is listed to the whole organisation: its suggested questions come from the index's own
    public documents — never from another collection's or an access-listed one's title."""
    from rag.knowledge_base import KnowledgeBase
    from rag.config import Settings

    docs = tmp_path / "docs"
    (docs / "hr").mkdir(parents=True)
    (docs / "Parking rules.md").write_text("# Parking rules\n\nVisitors park on level 2.\n", encoding="utf-8")
    (docs / "年假与请假制度.md").write_text("# 年假与请假制度\n\n员工入职满一年后享受带薪年休假。\n", encoding="utf-8")
    (docs / "Board minutes.md").write_text("---\naccess: [U0BOSS]\n---\n# Board minutes\n\nA merger is planned.\n",
                                          encoding="utf-8")
    (docs / "hr" / "Salary bands.md").write_text("# Salary bands\n\nBand 3 earns more.\n", encoding="utf-8")
    monkeypatch.setenv("AIE_DATA_DIR", str(tmp_path / "data"))
    KnowledgeBase.default(Settings(data_dir=tmp_path / "data", _env_file=None)).refresh([docs])

    out = tmp_path / "app.zip"
    result = CliRunner().invoke(app, ["teams-package", "--app-id", APP_ID, "--host", "bot.example.com",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    with zipfile.ZipFile(out) as package:
        manifest = json.loads(package.read("manifest.json"))
    titles = [c["title"] for lst in manifest["bots"][0]["commandLists"] for c in lst["commands"]]
    assert titles[:2] == ["reindex", "scope"]
    asked = " ".join(titles[2:])
    assert "Parking rules" in asked and "年假与请假制度" in asked
    assert "Board minutes" not in asked and "Salary bands" not in asked
    assert "meal allowance" not in asked, "not the sample handbook's question"
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert not list(jsonschema.Draft4Validator(schema).iter_errors(manifest))
