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
    assert "scripts/install" in ci


def test_the_readme_installs_as_ci_does_from_the_lock():
    """A newcomer's install and CI's are one script, which installs the hashed lock: neither depends on the
    pip a machine happens to have (pip 23 dropped a package that lxml's renamed extra brings) nor on what the
    index holds today: pip resolves nothing (pip 23.2.1 refused the lock when a newer lxml came out) and
    `pip check` fails the install when the lock misses a dependency."""
    install, _ = _commands()[:2]
    assert install.split(" && ")[0] == "scripts/install"
    assert "pip install" not in install
    recipe = (PROJECT / "scripts" / "install").read_text(encoding="utf-8")
    assert "--require-hashes --no-deps -r \"$lock\"" in recipe and "lock=requirements/test.txt" in recipe
    assert '"$venv/bin/pip" check' in recipe
    assert "--upgrade pip" not in recipe


def test_readme_example_files_exist():
    install, _ = _commands()[:2]
    folder = re.search(r"ai-employee index (\S+)", install).group(1)
    assert (PROJECT / folder).is_dir()
