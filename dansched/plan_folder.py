"""One consistent plan per folder: the files of one run written as a group, a
fingerprint that tells a folder holding one plan from one that mixes two, a lock so
that two runs into one folder do not interleave, and no temporary or lock file left
behind.

The group of a case in a folder is its contest files ``<case>_schedule.txt``,
``_memory.txt``, ``_spill.txt``, the other outputs of a solve (``_trace.json``, a Perfetto
trace; ``_view.html``, a page: the application's registry, :mod:`dansched.application.outputs`, builds
them) and ``<case>_report.json``. Which files a group holds is data, a :class:`GroupLayout`
(kind -> file name after ``<case>``, the rename order, the kinds that carry the plan's
fingerprint): :func:`folder_group` is the whole folder's (:data:`FOLDER_SUFFIXES`, the one
table of the file names; :func:`folder_paths`), :data:`CONTEST_GROUP` the contest files and
the report alone. This module knows the names of the files, never how to build them.
:func:`read_report` reads a folder's report. :func:`write_unit` writes a *unit*: the
case's group in a folder and in each of its members (:class:`Members`: a frontier's
point folders ``OUT/<case>_frontier/traffic-<T>``), one :class:`FolderWrite` each;
:func:`write_group` is the unit of one folder:

1. take an exclusive ``fcntl`` lock on ``<folder>/.dansched.lock``, then on each other
   folder of the unit, parents first (a second run into the folder waits for the first
   to finish its unit); the lock files are removed when the run lets go of them,
   whether the write succeeded or failed, and a lock that cannot be taken (no inode
   left) removes the folders this run created for it;
2. remove the temporary files and the ``.<case>.incomplete`` marker a killed run
   left behind, in every folder of the unit (the members this unit does not write too);
3. write every new file to a temporary name beside its target (``.<name>.<tag>``),
   flushed to disk, and check every target once more; a failure here (no room, a
   folder in the way) removes them and leaves every folder as it was
   (:class:`~dansched.errors.WriteFailed`, saying so; a folder this run created is
   removed again when it is empty);
4. with SIGTERM and SIGINT deferred (so a polite kill never lands in the middle),
   create the marker in every folder of the unit, remove the group's files this run
   does not produce (the old memory and spill after a problem-1 run, an old trace),
   rename the new files in the layout's order (the report last; the members first, the
   folder's own last), remove the case's files from the members this unit does not
   write (an earlier run's points; a folder that empties goes), and remove the markers,
   the folder's own last.

A signal is deferred the same way while the lock file or a temporary is made (and a
temporary written) and while they are removed (:func:`dansched.interrupt.held`), so that
a run interrupted anywhere (the command line's policy raises
:class:`~dansched.errors.Interrupted` at the signal) leaves no lock file, no temporary
and no folder it made; a lock file it opened but never held is removed too when no run
holds it.

The report carries ``fingerprint``: the sha256 of each plan file
(schedule, memory, spill) and one sha256 over them all; a trace carries the same
digest in ``otherData.plan_fingerprint`` (the layout's ``fingerprinted`` kinds).
:func:`check_folder` (run by ``audit``, ``trace --plan`` and ``view``, which present the
report's plan) says the folder mixes plans when the marker is there (a run was killed between its
renames; the next run repairs it), or when the report's digests do not match the plan
files present, or a trace names another plan; each message says what to do. So
whatever moment a run stops at, the unit is either its previous complete one, the new
complete one, or a state the checkers refuse in the folder and every member it touched. ``evaluate`` judges the plan
files as they are and says in one note how they differ from the report's plan
(:func:`plan_difference`). A folder without a report (plan files written by hand) is
not checked.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import secrets
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .checks import TEXT_ENCODING, read_json
from .errors import MixedPlanError, OutputError, ViewError, WriteFailed
from .interrupt import held, note_written
from .plan import (
    CONTEST_SUFFIXES,
    TEMPORARY_CHARS,
    Plan,
    check_case_name,
    check_names_fit,
    check_target,
    check_writable_folder,
    contest_paths,
    encoded,
    plan_texts,
)

__all__ = [
    "GroupLayout",
    "CONTEST_GROUP",
    "FOLDER_SUFFIXES",
    "FINGERPRINTED",
    "folder_group",
    "folder_paths",
    "read_report",
    "fingerprint_of",
    "PLAN_KINDS",
    "REPORT",
    "LOCK_NAME",
    "MixedPlanError",
    "group_paths",
    "plan_fingerprint",
    "write_group",
    "write_unit",
    "FolderWrite",
    "Members",
    "check_group_targets",
    "check_folder",
    "plan_difference",
    "folder_lock",
    "remove_leftovers",
    "signals_held",
]

PLAN_KINDS = ("schedule", "memory", "spill")
REPORT = "report"  # the report is renamed last: a group is complete once its report is in place
LOCK_NAME = ".dansched.lock"
TMP_TAG = ".dansched-tmp-"
signals_held = held  # SIGTERM and SIGINT acted on only after the block (dansched.interrupt)


@dataclass(frozen=True)
class GroupLayout:
    """The files of a case's group: ``suffixes`` maps each kind to its file name after
    ``<case>`` (the contest files and the report among them), in rename order (the report
    is renamed last whatever its place); ``fingerprinted`` lists the kinds whose file
    carries the plan's fingerprint in ``"plan_fingerprint": "<sha256>"`` (a trace)."""

    suffixes: Mapping[str, str]
    fingerprinted: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        missing = [k for k in (*PLAN_KINDS, REPORT) if k not in self.suffixes]
        if missing:
            raise ValueError(f"a group layout needs the contest files and the report; missing {missing}")
        if not set(self.fingerprinted) <= set(self.suffixes):
            raise ValueError(f"fingerprinted kinds {list(self.fingerprinted)} are not all in the layout")

    def order(self) -> list[str]:
        """The kinds in rename order: the layout's, the report last."""
        return [k for k in self.suffixes if k != REPORT] + [REPORT]


CONTEST_GROUP = GroupLayout(dict(CONTEST_SUFFIXES))  # the contest files and the report alone

# every file a plan folder holds for a case: kind -> file name after <case>, in rename order
# (the report last); the outputs registry (dansched.application.outputs) has one builder per kind
FOLDER_SUFFIXES: dict[str, str] = {
    "schedule": CONTEST_SUFFIXES["schedule"],
    "memory": CONTEST_SUFFIXES["memory"],
    "spill": CONTEST_SUFFIXES["spill"],
    "trace": "_trace.json",
    "view": "_view.html",
    REPORT: CONTEST_SUFFIXES[REPORT],
}
FINGERPRINTED = ("trace",)  # the kinds whose file carries the plan's fingerprint


def folder_group() -> GroupLayout:
    """The group of a case in a plan folder: every file of :data:`FOLDER_SUFFIXES`."""
    return GroupLayout(dict(FOLDER_SUFFIXES), FINGERPRINTED)


def group_paths(directory: str | Path, case: str, layout: GroupLayout) -> dict[str, Path]:
    """``{kind: DIR/<case><suffix>}`` of every kind of ``layout`` (a case name that cannot be
    a file name is refused first: :func:`~dansched.plan.check_case_name`)."""
    check_case_name(case)
    d = Path(directory)
    return {k: d / f"{case}{s}" for k, s in layout.suffixes.items()}


def folder_paths(directory: str | Path, case: str) -> dict[str, Path]:
    """``{kind: DIR/<case><suffix>}`` of every file of :func:`folder_group`."""
    return group_paths(directory, case, folder_group())


def read_report(directory: str | Path, case: str) -> dict[str, Any] | None:
    """``<case>_report.json`` of a plan folder, or None when there is none; raises
    :class:`~dansched.errors.ViewError` when it is not a JSON object."""
    path = contest_paths(directory, case)[REPORT]
    if not path.is_file():
        return None
    try:
        report = read_json(path.read_text(encoding=TEXT_ENCODING))
    except (ValueError, UnicodeDecodeError) as exc:  # a key given twice too (DuplicateKeyError)
        raise ViewError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(report, dict):
        raise ViewError(f"{path}: expected a JSON object")
    return report


def _marker(directory: Path, case: str) -> Path:
    return directory / f".{case}.incomplete"


def _temporary(target: Path, tag: str) -> Path:
    """The temporary ``target`` is written to before its rename (``tag``: this run's)."""
    return target.with_name(f".{target.name}{tag}")


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def plan_fingerprint(files: Mapping[str, bytes]) -> dict[str, object]:
    """``{"files": {kind: sha256}, "sha256": digest}`` of the plan files present
    (``files``: kind -> content; kinds of :data:`PLAN_KINDS`, in that order)."""
    per = {k: _digest(files[k]) for k in PLAN_KINDS if k in files}
    whole = _digest("".join(f"{k}:{h}\n" for k, h in per.items()).encode())
    return {"sha256": whole, "files": per}


def fingerprint_of(plan: Plan) -> dict[str, object]:
    """:func:`plan_fingerprint` of ``plan``'s contest files (:func:`~dansched.plan.plan_texts`)."""
    return plan_fingerprint({k: text.encode() for k, text in plan_texts(plan).items()})


@contextlib.contextmanager
def folder_lock(directory: Path) -> Iterator[None]:
    """Exclusive lock on ``directory/.dansched.lock``, waiting for another holder. The
    lock file is removed on the way out, success or failure, so a folder holds no lock
    file between runs; a waiter that was granted the lock on a file its holder has
    removed since tries again on the current one (same device and inode). Folders
    created here are removed again when the lock cannot be taken (no inode left, no
    permission) or the block fails, and leave them empty. A lock path that is not a
    regular file (a named pipe, a device, a link) is refused, and left alone."""
    path = directory / LOCK_NAME
    created = []  # the folders this call creates, deepest first
    missing = directory
    while not missing.exists() and missing != missing.parent:
        created.append(missing)
        missing = missing.parent

    def remove_created() -> None:
        for folder in created:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty

    fd = -1
    try:
        while True:
            with signals_held():  # the lock file and the folders made for it are known once they exist
                try:
                    directory.mkdir(parents=True, exist_ok=True)
                    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o666)
                except OSError as exc:
                    if exc.errno == errno.ELOOP:
                        raise WriteFailed(f"{path}: is a link, not dansched's lock file: remove it") from None
                    raise _io(directory, exc, False) from None
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise WriteFailed(f"{path}: is not a regular file, so not dansched's lock file: remove it")
            fcntl.flock(fd, fcntl.LOCK_EX)  # waits while another run holds it (a signal ends the wait)
            try:
                held, now = os.fstat(fd), os.stat(path)
                if (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino):
                    break
            except FileNotFoundError:
                pass
            os.close(fd)
            fd = -1
    except BaseException:  # no lock taken: a lock file nobody holds is removed, not left behind
        with signals_held():
            if fd >= 0:
                _drop_unheld(fd, path)
            remove_created()
        raise
    ok = False
    try:
        yield
        ok = True
    finally:
        with signals_held():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            os.close(fd)  # releases the lock
            if not ok:
                remove_created()


def _drop_unheld(fd: int, path: Path) -> None:
    """Close ``fd``, an open lock file this run does not hold; remove the file when no run
    holds it either (a run that opened it meanwhile retries on a new one, as after a
    holder's removal). A lock path that is not a regular file is left alone."""
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            here, now = os.fstat(fd), os.stat(path)
            if (here.st_dev, here.st_ino) == (now.st_dev, now.st_ino):
                os.unlink(path)
    except OSError:  # held by another run, or gone: theirs to remove
        pass
    finally:
        os.close(fd)


def remove_leftovers(directory: Path, case: str, layout: GroupLayout) -> None:
    """Temporary files of ``case``'s group and its marker, left by a killed run (call
    under :func:`folder_lock`: then no live run is writing them)."""
    prefixes = tuple(f".{p.name}{TMP_TAG}" for p in group_paths(directory, case, layout).values())
    with contextlib.suppress(FileNotFoundError):
        for name in os.listdir(directory):
            if name.startswith(prefixes):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(directory / name)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(_marker(directory, case))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@dataclass(frozen=True)
class FolderWrite:
    """One folder of a unit: the group of ``files`` (kind -> text) written into
    ``directory``, the ``extra`` files written with it (path -> bytes, e.g. a PNG; renamed
    before the report) and whether the group's other files go (``replace_group``;
    ``dansched trace`` adds a trace to a group without it)."""

    directory: Path
    files: Mapping[str, str | bytes]
    extra: Mapping[Path, bytes] = field(default_factory=dict)
    replace_group: bool = True


@dataclass(frozen=True)
class Members:
    """The sub-folders ``base/<prefix>*`` that belong to a unit beside its first folder (a
    frontier's point folders, ``OUT/<case>_frontier/traffic-<T>``): those a write of the
    unit does not write are an earlier run's, and lose the case's files and leftovers (a
    folder that holds nothing else then goes, and ``base`` once empty)."""

    base: Path
    prefix: str

    def present(self) -> list[Path]:
        """The member folders there now (folders, not links to one), by name."""
        try:
            entries = sorted(self.base.iterdir())
        except OSError:  # no base folder (or not a folder): no member
            return []
        return [p for p in entries if p.name.startswith(self.prefix) and p.is_dir() and not p.is_symlink()]


def _targets(folder: FolderWrite, case: str, layout: GroupLayout) -> list[tuple[Path, bytes]]:
    """The files of ``folder`` in rename order: the layout's, the extras, the report last."""
    paths = group_paths(folder.directory, case, layout)
    unknown = set(folder.files) - set(layout.suffixes)
    if unknown:
        raise ValueError(f"unknown group file kind(s): {sorted(unknown)}")
    order = layout.order()
    targets = [(paths[k], encoded(folder.files[k])) for k in order[:-1] if k in folder.files]
    targets += [(Path(p), b) for p, b in folder.extra.items()]
    if REPORT in folder.files:
        targets.append((paths[REPORT], encoded(folder.files[REPORT])))
    return targets


def _io(path: Path, exc: OSError | OutputError, replaced: bool) -> WriteFailed:
    """The one line of a write that failed after the checks: the path, the reason, and
    whether the folders kept their earlier plan."""
    why = exc.strerror or str(exc) if isinstance(exc, OSError) else str(exc).removeprefix(f"{path}: ")
    if replaced:
        state = "the write stopped part-way: the folders are marked incomplete; run dansched solve again"
    else:
        state = "nothing was replaced: what the folders held is kept"
    return WriteFailed(f"{path}: cannot write: {why} ({state})")


def _checked_again(path: Path, replaced: bool) -> None:
    """:func:`~dansched.plan.check_target` once more (something may have been put there since)."""
    try:
        check_target(path)
    except OutputError as exc:
        raise _io(path, exc, replaced) from None


def _outermost(paths: Iterable[Path]) -> list[Path]:
    """``paths`` without those inside another of them (the folders a write is kept in)."""
    unique = list(dict.fromkeys(paths))
    return [p for p in unique if not any(q != p and q in p.parents for q in unique)]


def write_unit(
    case: str, folders: Sequence[FolderWrite], layout: GroupLayout, members: Members | None = None
) -> list[Path]:
    """Write ``case``'s group into each of ``folders`` as one unit (the module docstring):
    under one lock (the first folder's, then every other folder's, parents first), every
    file staged in a temporary, then, with SIGTERM and SIGINT deferred, every rename (the
    first folder's last, its report the very last) and the removal of the case's files
    from the ``members`` this write does not write (an earlier run's). So at any moment
    the unit is the earlier run's whole, the new one whole, or marked incomplete in every
    folder it touches. Raises :class:`~dansched.errors.WriteFailed` (one line) when a
    file cannot be written: before any rename, saying nothing was replaced (the
    temporaries removed); a rename that fails part-way leaves the markers. Returns the
    paths written, the first folder's last."""
    folders = list(folders)
    root = folders[0].directory
    written = [(f, _targets(f, case, layout)) for f in folders]
    for _, targets in written:
        for p, _data in targets:
            _checked_again(p, False)
    with folder_lock(root), contextlib.ExitStack() as locks:
        written_dirs = {f.directory for f in folders}
        stale = [m for m in (members.present() if members is not None else []) if m not in written_dirs]
        for d in sorted((written_dirs - {root}) | set(stale), key=lambda d: (len(d.parts), str(d))):
            locks.enter_context(folder_lock(d))
        dirs = [f.directory for f in folders] + stale
        for d in dirs:
            remove_leftovers(d, case, layout)
        staged: dict[Path, list[tuple[Path, Path]]] = {}  # folder -> (temporary, target), in rename order
        try:
            _stage(written, staged, stale)
            with signals_held():  # a signal meanwhile lands once the whole unit is in place
                _commit(case, written, staged, stale, layout)
                locks.close()  # the other folders' locks let go (their lock files gone) ...
                for d in stale:  # ... so an emptied earlier point folder goes, and then their folder
                    with contextlib.suppress(OSError):
                        d.rmdir()
                if stale and members is not None:
                    with contextlib.suppress(OSError):
                        members.base.rmdir()
                os.unlink(_marker(root, case))  # the unit is complete
                # ... and known as kept before a signal held meanwhile lands
                for d in _outermost([f.directory for f in folders] + [p.parent for f in folders for p in f.extra]):
                    note_written(d)
        finally:
            with signals_held():
                for pairs in staged.values():
                    for tmp, _ in pairs:
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(tmp)
    order = written[1:] + written[:1]
    return [p for _, targets in order for p, _data in targets]


def _stage(
    written: list[tuple[FolderWrite, list[tuple[Path, bytes]]]],
    staged: dict[Path, list[tuple[Path, Path]]],
    stale: list[Path],
) -> None:
    """Every file of the unit written to a temporary beside its target and flushed to disk
    (``staged`` lists them as they are made, for their removal), then every target and
    earlier point folder checked once more: any failure here replaces nothing."""
    tag = TMP_TAG + secrets.token_hex(TEMPORARY_CHARS // 2)
    for f, targets in written:
        mine = staged.setdefault(f.directory, [])
        for p, data in targets:
            tmp = _temporary(p, tag)
            with signals_held():  # a temporary is made whole, and staged lists it (for the removal)
                try:
                    p.parent.mkdir(parents=True, exist_ok=True)
                    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 & ~_umask())
                except OSError as exc:
                    raise _io(p, exc, False) from None
                mine.append((tmp, p))
                try:
                    with os.fdopen(fd, "wb") as fh:
                        fh.write(data)
                        fh.flush()
                        os.fsync(fh.fileno())
                except OSError as exc:
                    raise _io(p, exc, False) from None
    for d in stale:
        if not os.access(d, os.W_OK | os.X_OK):
            raise _io(d, OSError(errno.EACCES, "an earlier run's point folder that cannot be cleared"), False)
    for _f, targets in written:
        for p, _data in targets:
            _checked_again(p, False)


def _commit(
    case: str,
    written: list[tuple[FolderWrite, list[tuple[Path, bytes]]]],
    staged: dict[Path, list[tuple[Path, Path]]],
    stale: list[Path],
    layout: GroupLayout,
) -> None:
    """The swap (signals held by the caller): a marker in every folder of the unit, each
    folder's renames (the first folder's last), the earlier points' files removed, the
    markers removed but the first folder's, which the caller removes last (after the
    emptied folders: until then the unit reads as incomplete)."""
    dirs = [f.directory for f, _ in written] + stale
    for d in dirs:
        _marker(d, case).write_bytes(b"")
    for f, _targets_of in written[1:] + written[:1]:
        _replace(case, f, staged[f.directory], layout)
    for d in stale:
        for path in group_paths(d, case, layout).values():
            if path.is_symlink() or path.is_file():
                path.unlink()
    for d in dirs[1:]:
        os.unlink(_marker(d, case))


def _replace(case: str, folder: FolderWrite, staged: list[tuple[Path, Path]], layout: GroupLayout) -> None:
    """One folder's part of the swap: the group's files this write does not produce
    removed (``replace_group``), then its staged files renamed into place (a failure here
    leaves the markers: the unit is flagged)."""
    paths = group_paths(folder.directory, case, layout)
    written = {p for _, p in staged}
    for k in layout.order() if folder.replace_group else ():
        if paths[k] not in written:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(paths[k])
    for tmp, p in staged:
        _checked_again(p, True)
        try:
            os.replace(tmp, p)
        except OSError as exc:
            raise _io(p, exc, True) from None


def write_group(
    directory: str | Path,
    case: str,
    files: Mapping[str, str | bytes],
    layout: GroupLayout,
    extra: Mapping[Path, bytes] | None = None,
    replace_group: bool = True,
) -> list[Path]:
    """Write ``files`` (kind -> text, kinds of ``layout``) as ``case``'s group in
    ``directory`` and (``replace_group``) remove the group's other files: a unit of one
    folder (:func:`write_unit`); ``extra`` (path -> bytes, e.g. a PNG) is written with
    them, renamed before the report. Raises :class:`~dansched.errors.WriteFailed` (one
    line) when a file cannot be written; then no target has been touched. Returns the
    paths written."""
    return write_unit(case, [FolderWrite(Path(directory), files, dict(extra or {}), replace_group)], layout)


def check_group_targets(directory: str | Path, case: str, layout: GroupLayout, kinds: Iterable[str]) -> None:
    """Raise :class:`~dansched.plan.OutputError` (one line) when ``case``'s files of
    ``kinds`` (of ``layout``) cannot be written into ``directory``: the folder is a file,
    sits under a file or cannot be written, a target is not a regular file
    (:func:`~dansched.plan.check_target`: a folder, a named pipe, a device...), or a name
    the write creates (the files, their temporaries, the marker) is longer than the file
    system takes (:func:`~dansched.plan.check_names_fit`), or the lock file's name is
    taken by something else than a regular file. Run before the work, so that a long solve
    is not lost to a wrong ``--out`` or a long case name; :func:`write_unit` checks again,
    and once more before each rename."""
    check_writable_folder(directory)
    lock = Path(directory) / LOCK_NAME
    with contextlib.suppress(OSError):
        if not stat.S_ISREG(os.lstat(lock).st_mode):
            raise OutputError(f"{lock}: is not a regular file, so not dansched's lock file: remove it")
    paths = group_paths(directory, case, layout)
    for k in kinds:
        check_target(paths[k])
    tag = TMP_TAG + "x" * TEMPORARY_CHARS
    made = [paths[k] for k in kinds]
    names = [p.name for p in made] + [_temporary(p, tag).name for p in made] + [_marker(Path(directory), case).name]
    check_names_fit(directory, names, made[0] if made else Path(directory))


def _report_fingerprint(paths: Mapping[str, Path]) -> dict[str, Any] | None:
    """The fingerprint the report records (None without a readable report, or one without it)."""
    try:
        report = read_json(paths[REPORT].read_text(encoding=TEXT_ENCODING))
    except (OSError, ValueError):
        return None
    fp = report.get("fingerprint") if isinstance(report, dict) else None
    return fp if isinstance(fp, dict) and isinstance(fp.get("files"), dict) else None


def plan_difference(directory: str | Path, case: str, layout: GroupLayout) -> str | None:
    """How the plan files of ``case`` in ``directory`` differ from the plan its report's
    fingerprint names, in a few words (the first difference: an interrupted group, a file
    missing, extra or changed); None when they are that plan, or the folder has no report
    with a fingerprint (plan files written by hand)."""
    d = Path(directory)
    if _marker(d, case).exists():
        return f"a run writing {case}'s plan was interrupted (found .{case}.incomplete)"
    paths = group_paths(d, case, layout)
    fp = _report_fingerprint(paths)
    if fp is None:
        return None
    listed, rep = fp["files"], paths[REPORT].name
    for k in PLAN_KINDS:
        p = paths[k]
        if k not in listed:
            if p.exists():
                return f"{p.name} is not part of the plan in {rep}"
            continue
        try:
            got = _digest(p.read_bytes())
        except OSError:
            return f"{p.name} is missing from the plan in {rep}"
        if got != listed[k]:
            return f"{p.name} does not match the fingerprint in {rep}"
    return None


def check_folder(directory: str | Path, case: str, layout: GroupLayout) -> dict[str, Any] | None:
    """Raise :class:`MixedPlanError` when ``directory`` holds an interrupted group of
    ``case``, plan files that are not those its report's fingerprint names
    (:func:`plan_difference`), or a file of a ``fingerprinted`` kind of ``layout`` that
    names another plan; return the fingerprint (None when the folder has no report, or a
    report without one). The commands that present the report's plan (``audit``,
    ``trace --plan``, ``view``) run it; ``evaluate`` judges the files as they are."""
    d = Path(directory)
    differs = plan_difference(d, case, layout)
    if differs is not None and _marker(d, case).exists():
        raise MixedPlanError(
            f"{d}: {differs}: the folder may mix two plans; run dansched solve again "
            f"(dansched evaluate judges the files as they are)"
        )
    paths = group_paths(d, case, layout)
    rep = paths[REPORT].name
    if differs is not None:
        # what to do, in the same line: the files changed after dansched solve wrote the folder
        raise MixedPlanError(
            f"{d}: {differs}: the folder mixes two plans (the files were changed after dansched solve "
            f"wrote them; dansched evaluate judges them as they are; to start again, run dansched solve)"
        )
    fp = _report_fingerprint(paths)
    if fp is None:
        return None
    for k in layout.fingerprinted:
        named = _named_fingerprint(paths[k])
        if named is not None and named != fp.get("sha256"):
            raise MixedPlanError(
                f"{d}: {paths[k].name} is of another plan than {rep}: the folder mixes two plans "
                f"(delete {paths[k].name} or write it again)"
            )
    return fp


def _named_fingerprint(path: Path) -> str | None:
    """The last ``"plan_fingerprint": "<sha256>"`` of a file (a trace's
    ``otherData.plan_fingerprint``; None when absent or unreadable)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 65536))  # otherData is at the end of the file
            tail = fh.read().decode(errors="replace")
    except OSError:
        return None
    key = '"plan_fingerprint": "'
    i = tail.rfind(key)
    if i < 0:
        return None
    j = tail.find('"', i + len(key))
    return tail[i + len(key) : j] if j > 0 else None
