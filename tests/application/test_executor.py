"""The executor under faults (dansched/application/executor.py): Dask scheduler addresses checked
before any connection and every network wait bounded; local pool workers that take
SIGTERM's default action, ignore SIGINT and die with their parent; a sweep interrupted
by a signal exits with its interruption line, without noise, and leaves no worker behind."""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import REPO, SHIPPED, run_cli

from dansched.application import executor as E
from dansched.errors import ExecutorError

EXP = SHIPPED / "Exp.json"
PR_GET_PDEATHSIG = 2


def _need_dask():
    if not E.dask_available():
        pytest.skip("dask[distributed] is not installed (pip install -e '.[dist]')")


# ---- scheduler addresses and network waits -------------------------------------------------


@pytest.mark.parametrize(
    "address, says",
    [
        ("notanaddress", "no port"),
        ("tcp://127.0.0.1", "no port"),
        ("tcp://", "no port"),
        ("tcp://:8786", "no host"),
        ("tcp://127.0.0.1:0", "from 1 to 65535"),
        ("tcp://127.0.0.1:99999", "from 1 to 65535"),
        ("tcp://127.0.0.1:http", "from 1 to 65535"),
        ("tcp://a b:8786", "is not a host name"),
        ("inproc://x", "inside one process"),
        ("http://127.0.0.1:8786", "unknown protocol 'http'"),
        ("::1:8786", "no port"),
    ],
)
def test_an_address_no_scheduler_can_have_is_refused_before_connecting(address, says):
    with pytest.raises(ExecutorError, match=says) as info:
        E.ExecutorOptions(scheduler=address)
    assert len(str(info.value).splitlines()) == 1 and "expected tcp://HOST:PORT" in str(info.value)


def test_usable_addresses_are_kept_in_their_canonical_form():
    assert E.scheduler_address("10.0.0.5:8786") == "tcp://10.0.0.5:8786"
    assert E.scheduler_address(" TCP://node-3.local:08786 ") == "tcp://node-3.local:8786"
    assert E.scheduler_address("tls://[::1]:8786") == "tls://[::1]:8786"


class Peer:
    """A loopback port that accepts connections and then says nothing, or answers bytes
    that are not Dask's protocol."""

    def __init__(self, answer: bytes | None):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.address = f"tcp://127.0.0.1:{self.sock.getsockname()[1]}"
        self.answer, self.conns = answer, []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            if self.answer is not None:
                conn.sendall(self.answer)

    def close(self):
        for c in self.conns:
            c.close()
        self.sock.close()


@pytest.mark.parametrize(
    "answer, says",
    [
        (None, "no answer within 2 s"),
        (b"\xff" * 64 + b"HTTP/1.1 200 OK\r\n\r\n", "does not answer as a Dask scheduler"),
    ],
    ids=["silent", "garbage"],
)
def test_a_peer_that_is_not_a_scheduler_is_one_line(answer, says, monkeypatch, capsys, tmp_path):
    """The outcome only: how soon it comes is the slow test below (a busy machine is slow, never wrong)."""
    code, err, _ = _ask_peer(answer, monkeypatch, capsys, tmp_path)
    assert code == 2 and len(err.strip().splitlines()) == 1 and says in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_silent_peer_is_given_up_within_the_timeouts(monkeypatch, capsys, tmp_path):
    """1 s to connect and 1 s for the handshake: the answer comes well within 10 s."""
    code, _, seconds = _ask_peer(None, monkeypatch, capsys, tmp_path)
    assert code == 2 and seconds < 10, seconds


def _ask_peer(answer: bytes | None, monkeypatch, capsys, tmp_path: Path) -> tuple[int, str, float]:
    """``sweep --scheduler`` at a peer that answers ``answer`` (None: silence), with 1 s
    timeouts: the status, stderr and the wall seconds."""
    _need_dask()
    peer = Peer(answer)
    try:
        t0 = time.monotonic()
        code, _, err = run_cli(
            monkeypatch, capsys, "sweep", EXP, "--scheduler", peer.address,
            "--connect-timeout", "1", "--handshake-timeout", "1", "--quiet", "--out", tmp_path / "out",
        )  # fmt: skip
        return code, err, time.monotonic() - t0
    finally:
        peer.close()


@pytest.mark.parametrize("address", ["ucx://127.0.0.1:8786", "tls://127.0.0.1:8786"])
def test_a_protocol_this_dask_cannot_use_is_one_line(address, monkeypatch, capsys, tmp_path):
    _need_dask()
    code, _, err = run_cli(
        monkeypatch, capsys, "sweep", EXP, "--scheduler", address, "--connect-timeout", "1",
        "--handshake-timeout", "1", "--quiet", "--out", tmp_path / "out",
    )  # fmt: skip
    assert code == 2 and len(err.strip().splitlines()) == 1 and address in err, err


# ---- local pool workers ----------------------------------------------------------------------


def _dispositions() -> tuple[object, object, int, int]:
    """In a pool worker: its SIGTERM and SIGINT handlers, the signal the kernel sends it when
    its parent dies (prctl PR_GET_PDEATHSIG), and its parent."""
    got = ctypes.c_int(0)
    ctypes.CDLL(None).prctl(PR_GET_PDEATHSIG, ctypes.byref(got), 0, 0, 0)
    return signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT), got.value, os.getppid()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_pool_workers_take_default_sigterm_ignore_sigint_and_die_with_the_parent():
    """The parent holds the command line's SIGTERM handler (as dansched's does); the
    workers must not inherit it."""
    old = signal.signal(signal.SIGTERM, lambda *_: None)
    try:
        got = [r for _, r, _ in E.run_tasks(_dispositions, [(), ()], E.ExecutorOptions(jobs=2))]
    finally:
        signal.signal(signal.SIGTERM, old)
    assert len(got) == 2
    for term, intr, death, parent in got:
        assert term == signal.SIG_DFL and intr == signal.SIG_IGN
        assert death == signal.SIGKILL and parent == os.getpid()


# ---- a real sweep interrupted --------------------------------------------------------------

SWEEP = ["sweep", SHIPPED / "matmul_s2.json", SHIPPED / "fa_s2.json", "--set", "UB=512,768,1024", "--jobs", "2"]
NOISE = ("Exception ignored", "terminate called", "Traceback")


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                fields = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(d))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie has died; only its parent's reaping is left


def _gone_within(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


def _busy_sweep(tmp_path: Path) -> tuple[subprocess.Popen, list[int]]:
    """A ``dansched sweep --jobs 2`` in its own session, once both pool workers run a cell."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    err = open(tmp_path / "stderr", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "dansched.cli", *map(str, SWEEP), "--quiet", "--out", str(tmp_path / "out")],
        stdout=subprocess.DEVNULL, stderr=err, env=env, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while time.monotonic() < deadline and len(workers) < 2:
        time.sleep(0.05)
        workers = _children(proc.pid)
    assert len(workers) == 2, "the pool did not start"
    time.sleep(0.5)  # inside their first cells
    return proc, workers


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(
    "sig, to_group, code",
    [(signal.SIGINT, True, 130), (signal.SIGTERM, False, 143), (signal.SIGKILL, False, -signal.SIGKILL)],
    ids=["ctrl-c", "sigterm", "sigkill"],
)
def test_an_interrupted_sweep_exits_and_leaves_no_worker(sig, to_group, code, tmp_path):
    """The outcome, with waits generous enough for a busy machine (the time it takes is the
    slow tests' and tests/test_signals.py's): the status, the one interruption line (none
    when killed), no noise, and no worker left behind."""
    proc, workers = _busy_sweep(tmp_path)
    try:
        (os.killpg if to_group else os.kill)(proc.pid, sig)  # Ctrl-C signals the whole foreground group
        assert proc.wait(timeout=60) == code
        left = _gone_within(workers, 60)
    finally:
        os.killpg(proc.pid, signal.SIGKILL) if proc.poll() is None else None
    err = (tmp_path / "stderr").read_text()
    assert not left, f"workers {left} outlived their parent"
    assert not any(n in err for n in NOISE), err
    lines = err.strip().splitlines()
    if code > 0:
        out = tmp_path / "out"
        assert lines in (["dansched: interrupted (nothing written)"], [f"dansched: interrupted (kept: {out})"]), err
    else:
        assert lines == [], err


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("trial", range(8))
def test_repeated_ctrl_c_at_any_moment_never_hangs(trial, tmp_path):
    """One Ctrl-C, or two in a row, at moments from pool start-up to mid-cell."""
    proc, workers = _busy_sweep(tmp_path)
    time.sleep([0.0, 0.2, 1.0, 3.0][trial % 4])
    os.killpg(proc.pid, signal.SIGINT)
    if trial >= 4:
        time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGINT)
    try:
        assert proc.wait(timeout=60) == 130
    finally:
        os.killpg(proc.pid, signal.SIGKILL) if proc.poll() is None else None
    err = (tmp_path / "stderr").read_text()
    assert not _gone_within(workers, 60) and not any(n in err for n in NOISE), err
