"""Local improvement of a Stage-1 order (the ``+ls`` part of variant ``mpas``).

With ALLOCs emitted just before the first operation that needs them and FREEs as
soon as they are ready, an order is determined by its *operation sequence*, and a
peak-tier buffer ``b`` is live exactly while the sequence is between its first
opener and its last closer. The peak of Eq. 6 is then ``max_p prof[p]`` with
``prof[p] = sum of s_b over buffers live at position p``, and the accumulated
pressure of Eq. 7 is ``sum_p prof[p]``.

:func:`improve_order` is a first-improvement hill climb on
``<peak, positions at peak, Phi>`` (Eq. 12's lexicographic objective with a
plateau breaker). At a peak position ``p`` it tries, in this order:

- *gather*: every user of a live buffer that runs after ``p`` is pulled before
  ``p``, group by group -- a group is the user with the operations that close the
  L0 buffers it opens (MOVE -> MATMUL -> the COPY draining L0C), its ancestors
  dragged along -- so the buffer dies before ``p`` (on FlashAttention: the last
  rows' Q K^T of a block run before the peak and K is freed early); L0 lifetimes
  that now overlap are repaired by moving the earlier opener next to its user;
- *pull* / *push*: one operation (a last closer, or one shortly after ``p``)
  moved before ``p`` with the ancestors in between, or a first opener moved after
  ``p`` with the descendants in between;
- *block*: one to four consecutive operations moved across ``p``.

Every move keeps precedence by construction or by check, and a candidate is
accepted only if L0 lifetimes stay disjoint per tier. Every evaluation
recomputes the profile from scratch with numpy, O(V + sum |Bufs|), so the
search is simple to trust; the caller still judges the result with the shared
evaluator.
"""

from __future__ import annotations

import numpy as np

from ...interrupt import stopping
from ...models.exact.op_model import OpModel
from ...params import LocalSearchParams

__all__ = ["improve_order"]


class _Profile:
    """Spans and profile of one operation sequence (positions ``pos[op index]``)."""

    def __init__(self, m: OpModel, pos: np.ndarray) -> None:
        self.pos = pos
        nonempty_o = np.diff(m.open_ptr) > 0
        nonempty_c = np.diff(m.close_ptr) > 0
        first = np.zeros(len(m.size), dtype=np.int64)
        last = np.zeros(len(m.size), dtype=np.int64)
        po = pos[m.open_idx]
        pc = pos[m.close_idx]
        first[nonempty_o] = np.minimum.reduceat(po, m.open_ptr[:-1][nonempty_o])
        last[nonempty_c] = np.maximum.reduceat(pc, m.close_ptr[:-1][nonempty_c])
        last = np.maximum(last, first)
        self.first, self.last = first, last
        k = len(pos)
        diff = np.bincount(first, weights=m.size, minlength=k + 1) - np.bincount(
            last + 1, weights=m.size, minlength=k + 1
        )
        self.prof = np.cumsum(diff[:k]).astype(np.int64)
        self.peak = int(self.prof.max()) if k else 0
        self.score = (self.peak, int((self.prof == self.peak).sum()), int(self.prof.sum()))

    def l0_ok(self, m: OpModel) -> bool:
        for bufs in m.tier_bufs:
            f, la = self.first[bufs], self.last[bufs]
            o = np.argsort(f, kind="stable")
            if np.any(f[o][1:] <= la[o][:-1]):
                return False
        return True


def _moved(pos: np.ndarray, seq: np.ndarray, s: int, e: int, j: int) -> tuple[np.ndarray, np.ndarray]:
    """Sequence and positions after moving block ``seq[s..e]`` so that it follows
    ``seq[j]`` (``j > e``) or precedes it (``j < s``)."""
    block = seq[s : e + 1]
    if j > e:
        new = np.concatenate([seq[:s], seq[e + 1 : j + 1], block, seq[j + 1 :]])
    else:
        new = np.concatenate([seq[:j], block, seq[j:s], seq[e + 1 :]])
    newpos = np.empty_like(pos)
    newpos[new] = np.arange(len(new))
    return new, newpos


def _pulled(m: OpModel, pos: np.ndarray, seq: np.ndarray, u_pos: int, j: int) -> tuple[np.ndarray, np.ndarray]:
    """Move the operation at ``u_pos`` earlier, to position ``j``, dragging along the
    operations between that are its ancestors (their order kept): always legal
    for precedence."""
    window = seq[j:u_pos].tolist()
    u = int(seq[u_pos])
    need = {u}
    drag = []
    for w in reversed(window):
        if any(x in need for x in m.op_succs[w]):
            need.add(w)
            drag.append(w)
    drag.reverse()
    dset = set(drag)
    rest = [w for w in window if w not in dset]
    new = np.concatenate([seq[:j], np.array(drag + [u] + rest, dtype=seq.dtype), seq[u_pos + 1 :]])
    newpos = np.empty_like(pos)
    newpos[new] = np.arange(len(new))
    return new, newpos


def _pushed(m: OpModel, pos: np.ndarray, seq: np.ndarray, u_pos: int, j: int) -> tuple[np.ndarray, np.ndarray]:
    """Move the operation at ``u_pos`` later, after position ``j``, dragging along the
    operations between that are its descendants (their order kept)."""
    window = seq[u_pos + 1 : j + 1].tolist()
    u = int(seq[u_pos])
    need = {u}
    drag = []
    for w in window:
        if any(x in need for x in m.op_preds[w]):
            need.add(w)
            drag.append(w)
    dset = set(drag)
    rest = [w for w in window if w not in dset]
    new = np.concatenate([seq[:u_pos], np.array(rest + [u] + drag, dtype=seq.dtype), seq[j + 1 :]])
    newpos = np.empty_like(pos)
    newpos[new] = np.arange(len(new))
    return new, newpos


def _group_end(m: OpModel, cur_last: np.ndarray, pos: np.ndarray, seq: np.ndarray, at: int) -> int:
    """Position of the last operation of the L0 group started at ``at``: follow the
    L0 buffers each operation uses to their last closers (a MOVE's L0B -> its
    MATMUL's L0C -> the COPY that drains it)."""
    end = at
    todo = [at]
    seen = {at}
    while todo:
        x = todo.pop()
        for b in m.bufs_of_op[int(seq[x])]:
            if m.l0_of_buf[b] < 0:
                continue
            last = int(cur_last[b])
            if last not in seen:
                seen.add(last)
                todo.append(last)
                end = max(end, last)
    return end


def _gathered(
    m: OpModel, prof: _Profile, seq: np.ndarray, b: int, j: int, params: LocalSearchParams
) -> tuple[np.ndarray, np.ndarray] | None:
    """Pull, group by group, every user of buffer ``b`` that runs after position ``j``
    to just before the operation now at ``j`` (each group: its last closer with the
    operations that close what it opens, ancestors dragged along), so ``b`` dies
    before that operation. None when it needs more than ``params.max_gather`` positions."""
    anchor = int(seq[j])
    cur = prof
    for _ in range(params.gather_groups):
        t = int(cur.pos[anchor])
        last = int(cur.last[b])
        if last < t:
            return seq, cur.pos
        u = _group_end(m, cur.last, cur.pos, seq, last)
        if u - t > params.max_gather:
            return None
        seq, pos = _pulled(m, cur.pos, seq, u, t)
        cur = _Profile(m, pos)
    return (seq, cur.pos) if int(cur.last[b]) < int(cur.pos[anchor]) else None


def _l0_repaired(m: OpModel, seq: np.ndarray, pos: np.ndarray, rounds: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Shrink L0 lifetimes that now overlap: the earlier-opened buffer's opener moves
    to just before the next operation that uses that buffer (a MOVE next to its
    MATMUL), when precedence allows."""
    for _ in range(rounds):
        prof = _Profile(m, pos)
        fixed = False
        for bufs in m.tier_bufs:
            f, la = prof.first[bufs], prof.last[bufs]
            o = np.argsort(f, kind="stable")
            bad = np.flatnonzero(f[o][1:] <= la[o][:-1])
            if len(bad) == 0:
                continue
            b1 = int(bufs[o][bad[0]])
            s0 = int(f[o][bad[0]])
            users = sorted(int(pos[i]) for i in _users(m, b1))
            later = [x for x in users if x > s0]
            if not later or later[0] - 1 <= s0 or not _legal(m, pos, seq, s0, s0, later[0] - 1):
                return seq, pos
            seq, pos = _moved(pos, seq, s0, s0, later[0] - 1)
            fixed = True
            break
        if not fixed:
            break
    return seq, pos


def _users(m: OpModel, b: int) -> list[int]:
    ops = m.open_idx[m.open_ptr[b] : m.open_ptr[b + 1]].tolist()
    ops += m.close_idx[m.close_ptr[b] : m.close_ptr[b + 1]].tolist()
    return sorted(set(ops))


def _legal(m: OpModel, pos: np.ndarray, seq: np.ndarray, s: int, e: int, j: int) -> bool:
    """Precedence stays respected when block ``s..e`` jumps over ``seq[e+1..j]`` or ``seq[j..s-1]``."""
    block = set(seq[s : e + 1].tolist())
    if j > e:
        lim = j
        for i in block:
            for w in m.op_succs[i]:
                if w not in block and pos[w] <= lim:
                    return False
    else:
        for i in block:
            for w in m.op_preds[i]:
                if w not in block and pos[w] >= j:
                    return False
    return True


def improve_order(
    m: OpModel, seq: list[int], max_evaluations: int = 6000, params: LocalSearchParams = LocalSearchParams()
) -> tuple[list[int], int]:
    """Hill-climb ``seq`` (operation indices) with at most ``max_evaluations`` profile
    evaluations and the moves of ``params``, stopping early after ``params.stall``
    evaluations without a better ``<peak, positions at peak>`` (deterministic: no clock,
    no randomness); returns the best sequence found and its peak."""
    stall = params.stall
    seq_a = np.array(seq, dtype=np.int64)
    pos = np.empty_like(seq_a)
    pos[seq_a] = np.arange(len(seq_a))
    cur = _Profile(m, pos)
    k = len(seq_a)
    budget = max_evaluations
    last_gain = budget
    while budget > 0 and last_gain - budget < stall and not stopping():  # a stop request: the best so far
        best = None
        peaks = np.flatnonzero(cur.prof == cur.peak)
        for p in peaks[:8].tolist():
            for kind, s, e, j in _moves_across(m, cur, p, k, params):
                if budget <= 0:
                    break
                if kind == "block":
                    if not _legal(m, cur.pos, seq_a, s, e, j):
                        continue
                    new, newpos = _moved(cur.pos, seq_a, s, e, j)
                elif kind == "gather":
                    got = _gathered(m, cur, seq_a, s, j, params)
                    if got is None:
                        continue
                    new, newpos = _l0_repaired(m, *got)
                elif kind == "pull":
                    new, newpos = _pulled(m, cur.pos, seq_a, s, j)
                else:
                    new, newpos = _pushed(m, cur.pos, seq_a, s, j)
                budget -= 1
                cand = _Profile(m, newpos)
                if cand.score < cur.score and cand.l0_ok(m):
                    best, best_seq = cand, new
                    break  # first improvement
            if best is not None:
                break
        if best is None:
            break
        if best.score[:2] < cur.score[:2]:
            last_gain = budget
        cur, seq_a = best, best_seq
    return seq_a.tolist(), cur.peak


def _moves_across(
    m: OpModel, cur: _Profile, p: int, k: int, params: LocalSearchParams
) -> list[tuple[str, int, int, int]]:
    """Moves that take a live buffer's first opener past position ``p`` or its last
    closer before it: short blocks, and single operations dragging the ancestors
    (``pull``) or descendants (``push``) in between. ``(kind, start, end, target)``
    tuples, deduplicated, in a fixed order."""
    live = np.flatnonzero((cur.first <= p) & (cur.last >= p) & (m.size > 0)).tolist()
    jumps, near = params.jumps, params.jumps[: params.group_jumps]
    drag, reach = params.max_drag, params.group_reach
    moves: list[tuple[str, int, int, int]] = []
    # gather: every later user of a live buffer, group by group, before p
    for d in near:
        for b in live:
            if int(cur.last[b]) > p and p - d >= 0:
                moves.append(("gather", b, b, p - d))
    for d in jumps:
        for b in live:
            f, la = int(cur.first[b]), int(cur.last[b])
            if f < p + d < k and p + d - f <= drag:
                moves.append(("push", f, f, p + d))
            if 0 <= p - d < la and la - (p - d) <= drag:
                moves.append(("pull", la, la, p - d))
    # gather: pull the group that ends shortly after a live buffer's last closer (the
    # closer with the operations that close what it opens, e.g. a later row's QK^T)
    # before p, dragging its ancestors, so the buffer dies before p
    for d in near:
        for b in live:
            la = int(cur.last[b])
            for u in range(la, min(k, la + params.gather_tail + 1)):
                if la > p and 0 <= p - d and u - (p - d) <= params.max_gather:
                    moves.append(("pull", u, u, p - d))
    # whole groups: an operation shortly after p pulled before it with its ancestors
    # (e.g. a later row's QK^T with its loads, closing K early), or one shortly
    # before p pushed after it with its descendants
    for d in near:
        for u in range(p + 1, min(k, p + reach + 1)):
            if 0 <= p - d and u - (p - d) <= drag:
                moves.append(("pull", u, u, p - d))
        for u in range(max(0, p - reach), p):
            if p + d < k and p + d - u <= drag:
                moves.append(("push", u, u, p + d))
    for d in jumps:
        for ln in params.blocks:
            for b in live:
                f, la = int(cur.first[b]), int(cur.last[b])
                j = p + d
                if f + ln - 1 < j < k:
                    moves.append(("block", f, f + ln - 1, j))
                j = p - d
                if 0 <= j < la - ln + 1:
                    moves.append(("block", la - ln + 1, la, j))
    return list(dict.fromkeys(moves))
