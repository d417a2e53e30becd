"""Where burstlab writes, and the rules that keep everything else safe.

An output directory may hold anything. burstlab writes only its own names there and records
what it wrote, with each file's size and SHA-256, in :data:`MANIFEST`. Replacing
(``overwrite``) touches only the files that manifest vouches for, unchanged since they were
written; a file under one of burstlab's names that the manifest does not vouch for is the
user's, and is refused even with ``overwrite``. The directory, its mode and every other entry
in it stay as they were.

Every location is checked before the work that fills it (:func:`check_output_dir`,
:func:`check_output_file`) and written all or nothing: files are staged beside their final
place and renamed into it; a failure, Ctrl-C included, removes what was staged and puts back
what was set aside.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from collections.abc import Callable, Collection, Mapping
from pathlib import Path

from burstlab.errors import OutputExistsError, OutputLocationError

__all__ = ["MANIFEST", "check_output_dir", "write_output_dir", "check_output_file", "StagedFile"]

#: The manifest burstlab writes into every output directory, last, naming what it wrote.
MANIFEST = ".burstlab-manifest.json"

#: Writes one output file at the path it is given.
Writer = Callable[[Path], None]


def check_output_dir(
    out: Path, names: Collection[str], *, overwrite: bool, label: str, overwrite_flag: str
) -> None:
    """Raise unless ``names`` (and the manifest) can be written into directory ``out``.

    ``label`` names the option or argument in messages (``--out``, ``out_dir``);
    ``overwrite_flag`` is how the caller asks for ``overwrite`` (``--overwrite``).
    """
    where = f"{label} {out}"
    if os.path.lexists(out) and not out.is_dir():
        raise OutputExistsError(f"{where}: exists and is not a directory; expected a directory")
    if not out.is_dir():
        _check_creatable(out, where)
        return
    try:
        present = [n for n in (*names, MANIFEST) if os.path.lexists(out / n)]
    except OSError as err:
        raise OutputLocationError(f"{where}: cannot read the directory ({_reason(err)})") from None
    vouched = _vouched_files(out) if present else set()
    for name in present:
        if name not in vouched:
            raise OutputExistsError(
                f"{where}: {name} was not written by burstlab (it is not in {MANIFEST}, or "
                "changed since); burstlab replaces only its own files: move it away or choose "
                "another directory"
            )
    if present and not overwrite:
        raise OutputExistsError(
            f"{where}: already holds burstlab output ({', '.join(present)}); pass "
            f"{overwrite_flag} to replace those files (nothing else in it is touched), or "
            "choose another directory"
        )
    _check_writable(out, where)


def write_output_dir(
    out: Path,
    files: Mapping[str, Writer],
    *,
    overwrite: bool,
    label: str,
    overwrite_flag: str,
) -> Path:
    """Write ``files`` (name → writer) and the manifest into directory ``out``, all or nothing,
    under the rules of :func:`check_output_dir`."""
    check_output_dir(out, files.keys(), overwrite=overwrite, label=label, overwrite_flag=overwrite_flag)
    if out.is_dir():
        _swap_into(out, files)
        return out
    created = _make_parents(out.parent)
    staging = _unique_dir(out.parent, f".{out.name}.", ".partial")
    try:
        _fill(staging, files)
        os.rename(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        _remove_empty(created)
        raise
    return out


def check_output_file(path: Path, *, overwrite: bool, label: str, overwrite_flag: str) -> None:
    """Raise unless the file ``path`` can be written: a new name in a directory burstlab can
    write (created if missing), or an existing file with ``overwrite``."""
    where = f"{label} {path}"
    if path.is_dir():
        raise OutputExistsError(f"{where}: is a directory; expected a file name")
    if os.path.lexists(path):
        if not overwrite:
            raise OutputExistsError(
                f"{where}: exists; pass {overwrite_flag} to replace it, or choose another name"
            )
        _check_writable(path.parent, where)
        return
    _check_creatable(path, where)


class StagedFile:
    """A file written under a hidden name beside ``target`` (:attr:`path`), renamed over it by
    :meth:`commit`; :meth:`discard` removes it, and any parent directory made for it."""

    def __init__(self, target: Path):
        self.target = target
        self._created = _make_parents(target.parent)
        self.path = target.parent / f".{target.name}.{secrets.token_hex(4)}.partial"

    def commit(self) -> None:
        os.replace(self.path, self.target)

    def discard(self) -> None:
        self.path.unlink(missing_ok=True)
        _remove_empty(self._created)


# ---- checks ------------------------------------------------------------------------------------


def _check_creatable(path: Path, where: str) -> None:
    """``path`` does not exist: its nearest existing ancestor must be a directory burstlab can
    write in (the directories between are created when writing)."""
    ancestor = path.parent
    while not os.path.lexists(ancestor) and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise OutputLocationError(
            f"{where}: {ancestor} is a file, not a directory; expected a path under a directory"
        )
    _check_writable(ancestor, where)


def _check_writable(directory: Path, where: str) -> None:
    """Create and remove an entry in ``directory``: the one test that also holds for root (who
    passes permission bits) and for read-only file systems."""
    try:
        probe = _unique_dir(directory, ".burstlab-probe.", "")
    except OSError as err:
        raise OutputLocationError(
            f"{where}: cannot write in {directory} ({_reason(err)}); expected a directory "
            "burstlab may create files in"
        ) from None
    probe.rmdir()


def _vouched_files(out: Path) -> set[str]:
    """Names in ``out`` that burstlab wrote and nobody changed since: listed in its manifest
    with the size and SHA-256 they still have (the manifest itself, if it parses as one)."""
    manifest = out / MANIFEST
    if manifest.is_symlink() or not manifest.is_file():
        return set()
    try:
        entries = json.loads(manifest.read_text(encoding="utf-8"))["files"]
        listed = {str(name): (int(e["bytes"]), str(e["sha256"])) for name, e in entries.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return set()
    vouched = {MANIFEST}
    for name, (size, digest) in listed.items():
        path = out / name
        if (
            "/" not in name
            and not path.is_symlink()
            and path.is_file()
            and path.stat().st_size == size
            and _sha256(path) == digest
        ):
            vouched.add(name)
    return vouched


# ---- writing -----------------------------------------------------------------------------------


def _fill(directory: Path, files: Mapping[str, Writer]) -> None:
    """Write every file into ``directory``, then the manifest that vouches for them."""
    entries = {}
    for name, write in files.items():
        write(directory / name)
        entries[name] = {"bytes": (directory / name).stat().st_size, "sha256": _sha256(directory / name)}
    from burstlab import __version__

    manifest = {"written_by": f"burstlab {__version__}", "files": entries}
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def _swap_into(out: Path, files: Mapping[str, Writer]) -> None:
    """Replace burstlab's files in the existing directory ``out``: stage the new ones in a
    hidden directory inside it (same file system, so renames are atomic), set the old ones
    aside, rename the new ones in (the manifest last); undo it all on any failure."""
    names = [*files, MANIFEST]
    staging = _unique_dir(out, ".burstlab-staging.", "")
    aside: Path | None = None
    moved: list[str] = []
    placed: list[str] = []
    restored = True
    try:
        _fill(staging, files)
        aside = _unique_dir(out, ".burstlab-replaced.", "")
        for name in names:
            if os.path.lexists(out / name):
                os.rename(out / name, aside / name)
                moved.append(name)
        for name in names:
            os.rename(staging / name, out / name)
            placed.append(name)
    except BaseException as err:
        restored = _undo(out, staging, aside, placed, moved, err)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if aside is not None and restored:
            shutil.rmtree(aside, ignore_errors=True)


def _undo(
    out: Path, staging: Path, aside: Path | None, placed: list[str], moved: list[str], err: BaseException
) -> bool:
    """Take the new files out of ``out`` and put the old ones back; False (and a note on
    ``err`` saying where they wait) if one cannot be put back."""
    for name in placed:
        try:
            os.rename(out / name, staging / name)
        except OSError:
            pass
    for name in moved:
        try:
            os.rename(aside / name, out / name)  # type: ignore[operator]
        except OSError:
            err.add_note(f"burstlab's previous files could not be put back; they are in {aside}")
            return False
    return True


def _make_parents(directory: Path) -> list[Path]:
    """Create ``directory`` and its missing parents; returns those created, deepest first."""
    missing = []
    while not os.path.lexists(directory) and directory != directory.parent:
        missing.append(directory)
        directory = directory.parent
    for d in reversed(missing):
        d.mkdir()
    return missing


def _remove_empty(directories: list[Path]) -> None:
    """Remove directories burstlab created, deepest first, while they are empty."""
    for d in directories:
        try:
            d.rmdir()
        except OSError:
            return


def _unique_dir(parent: Path, prefix: str, suffix: str) -> Path:
    """A new directory in ``parent``, with the mode the umask gives (``tempfile.mkdtemp``
    would make it 0700, which a directory renamed into place would keep)."""
    while True:
        path = parent / f"{prefix}{secrets.token_hex(4)}{suffix}"
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _reason(err: OSError) -> str:
    return err.strerror or str(err)
