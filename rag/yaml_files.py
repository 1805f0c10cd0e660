"""Reading an operator's YAML file (sources, scopes) with one-line errors that name the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def read_yaml(path: Path, variable: str, error: type[ValueError]) -> Any:
    """The data in `path` (the file `variable` names); `error` with one line saying what is wrong."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"{path}: no such file ({variable})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot be read ({exc.__class__.__name__})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise error(f"{path}: not valid YAML ({where}{problem})") from None
