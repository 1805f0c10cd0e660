"""The per-user folders: the data dir's default, and the cache any data dir's commands share."""

from __future__ import annotations

import sys

import pytest

from rag import user_dirs

pytestmark = pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="the XDG folders of Linux and BSD")


def test_the_xdg_variables_name_the_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert user_dirs.data_dir() == tmp_path / "data" / "ai-employee"
    assert user_dirs.cache_dir() == tmp_path / "cache" / "ai-employee"


def test_without_them_or_with_a_relative_one_the_home_folder_holds_them(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert user_dirs.data_dir() == tmp_path / ".local" / "share" / "ai-employee"
    assert user_dirs.cache_dir() == tmp_path / ".cache" / "ai-employee"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/data")  # XDG: a relative path is invalid
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    assert user_dirs.data_dir() == tmp_path / ".local" / "share" / "ai-employee"
    assert user_dirs.cache_dir() == tmp_path / ".cache" / "ai-employee"
