"""A real full disk for a command: a small tmpfs mounted in a mount namespace of the command's own (unshare),
given a copy of a data dir and then filled to its last byte. Nothing outside the namespace sees the mount."""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path

import pytest

FILLER = "filler"  # the file that takes the disk's last free byte
# $1: the data dir to copy, $2: where the full disk is mounted; then the command
_MOUNT_COPY_FILL = ('mount -t tmpfs -o size=16m full-disk "$2" && cp -a "$1"/. "$2" && '
                    '{ cat /dev/zero > "$2/' + FILLER + '" 2>/dev/null; true; } && shift 2 && exec "$@"')


@functools.cache
def _unshare() -> list[str]:
    """How this machine lets a process mount a tmpfs of its own: as root, or as root of a user namespace."""
    for unshare in (["unshare", "--mount"], ["unshare", "--map-root-user", "--mount"]):
        probe = [*unshare, "sh", "-c", "mount -t tmpfs -o size=1m probe /mnt"]
        if shutil.which("unshare") and subprocess.run(probe, capture_output=True).returncode == 0:
            return unshare
    return []


def on_a_full_disk(data_dir: Path, mount_point: Path) -> list[str]:
    """The command prefix that runs a command with `mount_point` a full disk holding a copy of `data_dir`."""
    unshare = _unshare()
    if not unshare:
        pytest.skip("no mount namespace can be made here (unshare --mount) to mount a small full tmpfs in")
    mount_point.mkdir(parents=True, exist_ok=True)
    return [*unshare, "sh", "-c", _MOUNT_COPY_FILL, "full-disk", str(data_dir), str(mount_point)]


def make_room(pid: int, mount_point: Path) -> None:
    """Free the full disk that process `pid` sees at `mount_point` (through its view of the file system)."""
    (Path(f"/proc/{pid}/root") / mount_point.relative_to("/") / FILLER).unlink()
