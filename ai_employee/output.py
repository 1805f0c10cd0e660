"""What every command shares: the consoles, errors without a trace, JSON output, the knowledge base."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import typer
from rich.markup import escape
from typer.core import TyperGroup

from ai_employee.progress import console, stderr

if TYPE_CHECKING:
    from rag.knowledge_base import KnowledgeBase
    from rag.config import Settings

stdout = console()


class Commands(TyperGroup):
    """Typer's group of commands, its help showing flags bare: typer writes a flag's type after it (`--json
    <bool>`), as if the flag took a value."""

    def get_help_option(self, ctx):
        return _bare(super().get_help_option(ctx))

    def get_command(self, ctx, cmd_name):
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            for param in command.params:
                _bare(param)
            _bare(command.get_help_option(ctx))
        return command


def _bare(param):
    """`param`, shown without a type in help when it is a flag."""
    if param is not None and getattr(param, "is_flag", False):
        param.metavar = ""
    return param


def fail(message: str, code: int = 1) -> None:
    stderr.print(f"[bold red]error:[/] {escape(message)}")  # messages may quote [lists] or paths
    raise typer.Exit(code)


def print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def settings() -> Settings:
    """The settings every command reads its data dir from; warns (one line) about an index left in ./data."""
    from rag.config import Settings, legacy_data_notice

    loaded = Settings()
    notice = legacy_data_notice(loaded)
    if notice:
        stderr.print(f"[bold yellow]warning:[/] {escape(notice)}", soft_wrap=True)
    return loaded


def knowledge_base() -> KnowledgeBase:
    from ai_employee.wiring import environment_readers
    from rag.knowledge_base import KnowledgeBase

    return KnowledgeBase.default(settings(), find_readers=environment_readers)


def require_index(kb: KnowledgeBase) -> None:
    """Fail before anything is created (data dir, caches, feedback database) when there is no index."""
    from rag.index.milvus_schema import MilvusUnavailableError
    from rag.index.snapshot import IndexNotFoundError

    try:
        kb.store.current_path()
    except (IndexNotFoundError, MilvusUnavailableError, ValueError) as exc:
        fail(str(exc))
