"""The README's first screen is a promise: keep its two commands true."""

import re

from tests.conftest import PROJECT


def _commands() -> list[str]:
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.+?)\n```", readme)


def test_ci_runs_exactly_the_readme_test_command():
    install, test = _commands()[:2]
    ci = (PROJECT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert ci[-1] == test
    assert "pip install" in install and "scripts/install" in ci
    assert 'pip install --quiet -e ".[test]"' in (PROJECT / "scripts" / "install").read_text(encoding="utf-8")


def test_readme_example_files_exist():
    install, _ = _commands()[:2]
    folder = re.search(r"ai-employee index (\S+)", install).group(1)
    assert (PROJECT / folder).is_dir()
