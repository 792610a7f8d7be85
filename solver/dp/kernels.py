"""Compiled inner loops of the DP (numba).

numba earns its place here: choosing an order is a lexicographic scan with a threshold and 1e-9
tie tolerances over every (inventory, cash, price, order) — billions of branchy comparisons that
numpy could only do by materialising (inventory × order × cash) arrays of many gigabytes.
Compiled functions are cached on disk, so only the first run on a machine pays the compile time.
"""

from __future__ import annotations

import numpy as np
from numba import get_thread_id, njit, prange

from solver.dp.problem import ORDER_SIDE as ORDERS

THRESHOLD = 0.95  # p̄ = 1 − ε, inclusive ([CS-26])
TOL = 1e-9  # ε_num: values within this are ties ([CS-25])
BLOCK = 8  # cash levels per block in the scan's block-skipping test
SUMMARY = 6  # rows of an incumbent summary, see `_fold`
NO_INCUMBENTS = (0.0, np.inf, np.inf, 0.0, np.inf, np.inf)  # the summary of no cash levels
TOP_P, TOP_V, FIRST_P, FIRST_V = 0, 1, 2, 3  # columns of a row's `top` (see `_summary`)
BLOCK_P, BLOCK_V, TAIL_P, TAIL_V = 0, 1, 2, 3  # columns of a row's `peaks` (see `_summary`)


@njit(cache=True, inline="always")
def _unbeatable(p, v_any, v_adm, summary, i):
    """True when no offer with P̂ ≤ p, V̂ ≤ v_any (and V̂ ≤ v_adm if P̂ clears the threshold) can displace any
    incumbent summarised in summary[:, i]. This is eq. 12's replacement rule with its [CS-25] tolerances,
    bounded cell by cell: a weak incumbent falls to an admissible offer, to a P̂ more than TOL higher, or to a
    P̂ within TOL and a V̂ more than TOL higher; an admissible one to a V̂ more than TOL higher, or a V̂ within
    TOL and a P̂ more than TOL higher. Ties (P̂ = 0 or 1 everywhere is common) are therefore skipped too."""
    return _unbeatable_by(
        p, v_any, v_adm, summary[0, i], summary[1, i], summary[2, i], summary[3, i], summary[4, i], summary[5, i]
    )


@njit(cache=True, inline="always")
def _unbeatable_by(p, v_any, v_adm, any_weak, weak_p, weak_v, any_adm, adm_v, adm_p):
    """`_unbeatable` on the summary's six numbers. Kept apart because numba compiles the test ~5 % faster
    when the summary is read into scalars up front than when it is indexed inside the conditions."""
    if any_weak != 0.0 and p >= weak_p - TOL and (p > weak_p + TOL or p >= THRESHOLD - TOL or v_any > weak_v + TOL):
        return False
    if any_adm != 0.0 and p >= THRESHOLD - TOL and v_adm >= adm_v - TOL and (v_adm > adm_v + TOL or p > adm_p + TOL):
        return False
    return True


@njit(cache=True, inline="always")
def _scan(hp, hv, peaks, row, k, o, nc, badm, bp, bv, bidx, blocks, floors):
    """Offer order o (cost k) at every cash level c ≥ k, where it reads its row (`row` of hp/hv) at c − k.
    [CS-25]: candidates arrive by ascending (cost, o), so an incumbent keeps every tie. Cash is taken in
    blocks: a block is skipped when even the row's largest values over the levels it reads there (they span
    at most two of the row's own blocks, whose maxima are peaks[row, ·, BLOCK_P/BLOCK_V]) cannot displace its
    incumbents (`blocks`, see `_summarise_block`), and the scan ends when the row's largest values from
    there on (peaks[row, ·, TAIL_P/TAIL_V]) cannot displace any incumbent at higher cash (`floors`, which this
    scan has not touched above the current block). The row itself, the bulk of the memory traffic, is only
    read in blocks that survive. Arrays are indexed, not sliced: a slice per scan costs two reference-count
    updates each. Returns the highest cash level o became the choice at, or −1."""
    changed = -1
    for b in range(k // BLOCK, (nc - 1) // BLOCK + 1):
        end = min(nc, b * BLOCK + BLOCK)
        first, last = (max(k, b * BLOCK) - k) // BLOCK, (end - 1 - k) // BLOCK
        top_v = max(peaks[row, first, BLOCK_V], peaks[row, last, BLOCK_V]) - k
        if _unbeatable(max(peaks[row, first, BLOCK_P], peaks[row, last, BLOCK_P]), top_v, top_v, blocks, b):
            if end < nc:
                tail_v = peaks[row, (end - k) // BLOCK, TAIL_V] - k
                if _unbeatable(peaks[row, (end - k) // BLOCK, TAIL_P], tail_v, tail_v, floors, end):
                    break
            continue
        hit = False
        for c in range(max(k, b * BLOCK), end):
            p_hat = hp[row, c - k]
            v_hat = hv[row, c - k] - k
            if p_hat >= THRESHOLD - TOL:
                if badm[c] and not (v_hat > bv[c] + TOL or (v_hat >= bv[c] - TOL and p_hat > bp[c] + TOL)):
                    continue
                badm[c] = True
            elif badm[c] or not (p_hat > bp[c] + TOL or (p_hat >= bp[c] - TOL and v_hat > bv[c] + TOL)):
                continue
            bp[c] = p_hat
            bv[c] = v_hat
            bidx[c] = o
            changed = c
            hit = True
        if hit:
            _summarise_block(b, nc, badm, bp, bv, blocks)
    return changed


@njit(cache=True, inline="always")
def _fold(c, badm, bp, bv, any_weak, weak_p, weak_v, any_adm, adm_v, adm_p):
    """Merge cash level c's incumbent into a summary of incumbents: whether any is weak (below the
    threshold), the least P̂ and least V̂ among those, whether any is admissible, the least V̂ and least P̂
    among those. Least values taken separately still bound every member from below, which is all
    `_unbeatable` needs."""
    if badm[c]:
        return any_weak, weak_p, weak_v, 1.0, min(adm_v, bv[c]), min(adm_p, bp[c])
    return 1.0, min(weak_p, bp[c]), min(weak_v, bv[c]), any_adm, adm_v, adm_p


@njit(cache=True, inline="always")
def _put(table, i, any_weak, weak_p, weak_v, any_adm, adm_v, adm_p):
    table[0, i] = any_weak
    table[1, i] = weak_p
    table[2, i] = weak_v
    table[3, i] = any_adm
    table[4, i] = adm_v
    table[5, i] = adm_p


@njit(cache=True, inline="always")
def _summarise_block(b, nc, badm, bp, bv, blocks):
    """blocks[:, b]: the summary of the block's cash levels."""
    any_weak, weak_p, weak_v, any_adm, adm_v, adm_p = NO_INCUMBENTS
    for c in range(b * BLOCK, min(nc, b * BLOCK + BLOCK)):
        any_weak, weak_p, weak_v, any_adm, adm_v, adm_p = _fold(
            c, badm, bp, bv, any_weak, weak_p, weak_v, any_adm, adm_v, adm_p
        )
    _put(blocks, b, any_weak, weak_p, weak_v, any_adm, adm_v, adm_p)


@njit(cache=True, inline="always")
def _refresh_floors(lo, hi, nc, badm, bp, bv, floors):
    """floors[:, c]: the summary of cash levels c, c+1, …, recomputed for c = hi down to lo after levels up
    to hi changed (levels above hi kept theirs)."""
    any_weak, weak_p, weak_v, any_adm, adm_v, adm_p = NO_INCUMBENTS
    if hi + 1 < nc:
        any_weak, weak_p, weak_v = floors[0, hi + 1], floors[1, hi + 1], floors[2, hi + 1]
        any_adm, adm_v, adm_p = floors[3, hi + 1], floors[4, hi + 1], floors[5, hi + 1]
    for c in range(hi, lo - 1, -1):
        any_weak, weak_p, weak_v, any_adm, adm_v, adm_p = _fold(
            c, badm, bp, bv, any_weak, weak_p, weak_v, any_adm, adm_v, adm_p
        )
        _put(floors, c, any_weak, weak_p, weak_v, any_adm, adm_v, adm_p)


@njit(cache=True)
def _valid(n_cash, reach, spent):
    """Cash levels a row is read at: at least cash 0, at most what holding `spent`'s worth allows."""
    return max(1, min(n_cash, reach + 1 - spent))


@njit(cache=True, parallel=True)
def solve_round(
    gp,
    gv,
    box,
    held,
    reach,
    floor_prices,
    window_of,
    window_kernel,
    window_top,
    window_count,
    window_rep,
    span3,
    orders_sorted,
    order_cost,
    probs,
    a3p,
    a3v,
    a2p,
    a2v,
    hp,
    hv,
    peaks,
    out_p,
    out_v,
    out_policy,
    threads,
    lazy,
):
    """One round, one memory state: for every held inventory n in the box that a play can reach (`held`), cash c
    and price scenario, P̂/V̂ of every order by exact expectation over receipts, then eq. 12's selection.

    gp, gv: (K, K, K, C+1) post-receipt continuation, K = inventory cap + 1 (already net of production, verdict,
    deduction, spoilage). Receipts factorise per input, so expectations are taken one input at a time, once per
    receipt window (a distribution shared by many (holding, order) pairs): a3 over input 3 for every
    (m1, window3, m2), a2 over input 2 for every (window2, window3, m1), then over input 1 into hp/hv
    (W1, W2, slots for the windows of input 3 in use, C+1), which the selection for every held (n1, n2) at
    each n3 then reads. Only the rows some held state reads are computed (`_rows_needed`), and only the a2
    and a3 entries those rows use. a3/a2/hp/hv and the rows' block maxima `peaks` are caller-owned scratch
    shared by all threads; `threads` is numba's thread count, for the selection's small per-thread work
    arrays. out_v holds Σ_p ν(p)·(V̂ − M_t); out_policy the chosen order index per price scenario, left as
    the caller set it (UNSOLVED) everywhere else.

    `lazy` (one thread only): a row is computed when the selection first scans it, not when its window's run
    starts; until then its `row_top` holds upper bounds from the a2 stage's maxima (`_bound_row`). Most rows are
    never scanned. The skip tests only get looser with upper bounds, and an order whose bounds pass is tested
    again on its computed row before it is scanned, so the orders chosen are the same either way. Several
    threads would race on a row's first computation, so they take every row when its run starts.

    Only consistent states are solved: holding n at round t means n was bought at no less than the
    lowest prices, so cash ≤ reach − Σ_x n_x·min p_x, where reach is the most cash the round can see
    (before cash saturation folds the top levels into one index). The set is closed under the transition
    (what is held next was ordered now), so no solved value ever reads an unsolved one: a row whose
    receipts can reach holding m is only computed up to reach − (cost of m at the lowest prices), which
    is the most cash after ordering any state that uses it can have. Entries above stay unset and are never read.
    """
    n_cash = gp.shape[3]
    f1, f2, f3 = floor_prices[0], floor_prices[1], floor_prices[2]
    w1n, w2n, w3n = window_count[0], window_count[1], window_count[2]
    top1, top2, top3 = window_top[0], window_top[1], window_top[2]
    cap1, cap2 = top1[:w1n].max(), top2[:w2n].max()
    need = _rows_needed(held, box, window_of, window_count)
    need23 = np.zeros((w2n, w3n), dtype=np.bool_)  # rows of a2 read by needed rows
    need3 = np.zeros(w3n, dtype=np.bool_)  # windows of input 3 whose a3 entries are read
    for w2 in range(w2n):
        for w3 in range(w3n):
            need23[w2, w3] = need[:, w2, w3].any()
            need3[w3] |= need23[w2, w3]
    for i in prange((cap1 + 1) * (cap2 + 1)):
        m1, m2 = divmod(np.int64(i), cap2 + 1)  # prange indices are unsigned; mixed with signed ones they give floats
        for w3 in range(w3n):
            if not need3[w3]:
                continue
            nc = _valid(n_cash, reach, f1 * m1 + f2 * m2 + f3 * top3[w3])
            _expect(a3p[m1, w3, m2], a3v[m1, w3, m2], gp[m1, m2], gv[m1, m2], window_kernel[2, w3], top3[w3], nc)
    a2top = np.empty((w2n, w3n, cap1 + 1, 4))  # each a2 entry's `top` (see `_summary`), for `_bound_row`
    for i in prange((cap1 + 1) * w2n):
        m1, w2 = divmod(np.int64(i), w2n)
        for w3 in range(w3n):
            if not need23[w2, w3]:
                continue
            nc = _valid(n_cash, reach, f1 * m1 + f2 * top2[w2] + f3 * top3[w3])
            _expect(a2p[w2, w3, m1], a2v[w2, w3, m1], a3p[m1, w3], a3v[m1, w3], window_kernel[1, w2], top2[w2], nc)
            if lazy:
                _entry_top(a2p[w2, w3, m1], a2v[w2, w3, m1], nc, a2top[w2, w3, m1])
    bp = np.empty((threads, n_cash))
    bv = np.empty((threads, n_cash))
    badm = np.empty((threads, n_cash), dtype=np.bool_)
    bidx = np.empty((threads, n_cash), dtype=np.int16)
    floors = np.empty((threads, SUMMARY, n_cash))
    blocks = np.empty((threads, SUMMARY, (n_cash + BLOCK - 1) // BLOCK))
    order_row = np.empty((threads, ORDERS**3), dtype=np.int64)
    order_top = np.empty((threads, ORDERS**3, 4))
    order_cheap = np.empty((threads, ORDERS**3), dtype=np.bool_)
    order_exact = np.empty((threads, ORDERS**3), dtype=np.bool_)
    rising = np.empty(hp.shape[0], dtype=np.bool_)
    ready = np.empty(hp.shape[0], dtype=np.bool_)
    row_top = np.empty((hp.shape[0], 4))
    # A window of input 3 serves a run of holdings n3 (span3: first..last). Its rows are computed once, when
    # its run starts, into a slot of the slab that is given back when the run ends.
    first, last = span3[:, 0], span3[:, 1]
    slots = hp.shape[0] // (w1n * w2n)
    slot_of = np.full(w3n, -1, dtype=np.int64)
    w3_of_slot = np.full(slots, -1, dtype=np.int64)
    free = np.arange(slots)
    n_free = slots
    fresh = np.empty(w3n, dtype=np.int64)
    live = np.empty((box[0] + 1) * (box[1] + 1), dtype=np.int64)
    todo = np.empty(w1n * w2n * w3n, dtype=np.int64)
    for n3 in range(box[2] + 1):
        n_fresh = 0
        for w3 in range(w3n):
            if first[w3] >= 0 and last[w3] == n3 - 1:
                free[n_free] = slot_of[w3]
                n_free += 1
            elif first[w3] == n3:
                fresh[n_fresh] = w3
                n_fresh += 1
        n_rows = 0
        for j in range(n_fresh):
            n_free -= 1
            slot_of[fresh[j]] = free[n_free]
            w3_of_slot[free[n_free]] = fresh[j]
            for w1 in range(w1n):
                for w2 in range(w2n):
                    if need[w1, w2, fresh[j]]:
                        todo[n_rows] = (w1 * w2n + w2) * w3n + fresh[j]
                        n_rows += 1
        for i in prange(n_rows):
            w12, w3 = divmod(todo[i], w3n)
            w1, w2 = divmod(w12, w2n)
            row = (w1 * w2n + w2) * slots + slot_of[w3]
            if lazy:
                _bound_row(row_top[row], a2top[w2, w3], window_kernel[0, w1], top1[w1])
                rising[row] = False
                ready[row] = False
            else:
                _fill_row(
                    row,
                    hp,
                    hv,
                    peaks,
                    row_top,
                    rising,
                    ready,
                    a2p,
                    a2v,
                    window_kernel[0],
                    top1,
                    top2,
                    top3,
                    w2n,
                    slots,
                    w3_of_slot,
                    n_cash,
                    reach,
                    floor_prices,
                )
        n_live = 0
        for n2 in range(box[1] + 1):
            for n1 in range(box[0] + 1):
                if held[n1, n2, n3]:
                    live[n_live] = n2 * (box[0] + 1) + n1
                    n_live += 1
        # numba hands each thread one contiguous block of iterations; low holdings cost the most (every order
        # is distinct), so interleave cheap and dear ones: 0, N−1, 1, N−2, …
        for i in prange(n_live):
            half = np.int64(i) // 2
            n2, n1 = divmod(live[half if i % 2 == 0 else n_live - 1 - half], box[0] + 1)
            nc = _valid(n_cash, reach, f1 * n1 + f2 * n2 + f3 * n3)
            t = get_thread_id()
            best = _gather(
                n1,
                n2,
                n3,
                w2n,
                slots,
                slot_of,
                window_of,
                window_rep,
                rising,
                ready,
                row_top,
                order_row[t],
                order_top[t],
                order_cheap[t],
                order_exact[t],
            )
            _select(
                n1,
                n2,
                n3,
                nc,
                hp,
                hv,
                peaks,
                order_row[t],
                order_top[t],
                order_cheap[t],
                order_exact[t],
                best,
                orders_sorted,
                order_cost,
                probs,
                bp[t],
                bv[t],
                badm[t],
                bidx[t],
                floors[t],
                blocks[t],
                out_p,
                out_v,
                out_policy,
                rising,
                ready,
                row_top,
                a2p,
                a2v,
                window_kernel[0],
                top1,
                top2,
                top3,
                w2n,
                slots,
                w3_of_slot,
                n_cash,
                reach,
                floor_prices,
            )


@njit(cache=True)
def _rows_needed(held, box, window_of, window_count):
    """need[w1, w2, w3]: whether some held state has an order whose receipts fall in these windows, that is,
    whether the selection will read the row. Unreachable holdings (see `problem._reachable_holdings`) leave
    most rows unread."""
    need = np.zeros((window_count[0], window_count[1], window_count[2]), dtype=np.bool_)
    for n1 in range(box[0] + 1):
        for n2 in range(box[1] + 1):
            for n3 in range(box[2] + 1):
                if held[n1, n2, n3]:
                    for o1 in range(ORDERS):
                        for o2 in range(ORDERS):
                            for o3 in range(ORDERS):
                                need[window_of[0, n1, o1], window_of[1, n2, o2], window_of[2, n3, o3]] = True
    return need


@njit(cache=True)
def _expect(dst_p, dst_v, src_p, src_v, weights, top, nc):
    """dst[c] = Σ_m weights[m] · src[m, c] for c < nc, for P̂ and V̂ together: the expectation over one
    input's post-receipt holding m ≤ top. Each of the three per-input stages is this, on views that put
    that input's holding first."""
    dst_p[:nc] = 0.0
    dst_v[:nc] = 0.0
    for m in range(top + 1):
        w = weights[m]
        if w != 0.0:
            for c in range(nc):
                dst_p[c] += w * src_p[m, c]
                dst_v[c] += w * src_v[m, c]


@njit(cache=True)
def _fill_row(
    row,
    hp,
    hv,
    peaks,
    row_top,
    rising,
    ready,
    a2p,
    a2v,
    kernel1,
    top1,
    top2,
    top3,
    w2n,
    slots,
    w3_of_slot,
    n_cash,
    reach,
    floor_prices,
):
    """Row `row` of hp/hv (the expectation over input 1's receipts, see `solve_round`), its block maxima and
    `top`, whether it rises; marked ready."""
    w12, slot = divmod(row, slots)
    w1, w2 = divmod(w12, w2n)
    w3 = w3_of_slot[slot]
    nc = _valid(n_cash, reach, floor_prices[0] * top1[w1] + floor_prices[1] * top2[w2] + floor_prices[2] * top3[w3])
    _expect(hp[row], hv[row], a2p[w2, w3], a2v[w2, w3], kernel1[w1], top1[w1], nc)
    rising[row] = _summary(hp[row], hv[row], peaks[row], row_top[row], nc)
    ready[row] = True


BOUND_SLACK = 1e-9  # relative: covers the rounding of the row's weighted sum, which a bound must not undercut


@njit(cache=True)
def _entry_top(row_p, row_v, nc, top):
    """An a2 entry's largest P̂ and V̂ over the levels it holds and over its first block (columns as `_summary`'s
    `top`)."""
    top[TOP_P] = row_p[0]
    top[TOP_V] = row_v[0]
    for c in range(1, nc):
        top[TOP_P] = max(top[TOP_P], row_p[c])
        top[TOP_V] = max(top[TOP_V], row_v[c])
        if c == BLOCK - 1:
            top[FIRST_P], top[FIRST_V] = top[TOP_P], top[TOP_V]
    if nc < BLOCK:
        top[FIRST_P], top[FIRST_V] = top[TOP_P], top[TOP_V]


@njit(cache=True)
def _bound_row(top, entry_tops, weights, holding_top):
    """Upper bounds on a row's `top` before it is computed: the row is Σ_m w_m·(a2 entry m), w_m ≥ 0, over levels
    every entry with w_m ≠ 0 holds, so its largest value is at most Σ_m w_m·(entry m's largest), plus slack for
    the rounding of both sums."""
    for j in range(4):
        total = 0.0
        for m in range(holding_top + 1):
            if weights[m] != 0.0:
                total += weights[m] * entry_tops[m, j]
        top[j] = total + BOUND_SLACK * (1.0 + abs(total))


@njit(cache=True)
def _summary(row_p, row_v, peaks, top, nc):
    """A row's maxima over each block of BLOCK cash levels (peaks[b, BLOCK_P/BLOCK_V]) and over each block and
    all above it (peaks[b, TAIL_P/TAIL_V]), side by side so a scan's tests share cache lines; in `top` its
    largest P̂ and V̂ over the levels it is read at and over its first block (TOP_P, TOP_V, FIRST_P,
    FIRST_V). Returns whether it never falls as cash rises."""
    up = True
    for c in range(1, nc):
        if row_p[c] < row_p[c - 1] or row_v[c] < row_v[c - 1]:
            up = False
    top_p = -np.inf
    top_v = -np.inf
    for b in range((nc + BLOCK - 1) // BLOCK):
        block_p = row_p[b * BLOCK]
        block_v = row_v[b * BLOCK]
        for c in range(b * BLOCK + 1, min(nc, b * BLOCK + BLOCK)):
            block_p = max(block_p, row_p[c])
            block_v = max(block_v, row_v[c])
        peaks[b, BLOCK_P] = block_p
        peaks[b, BLOCK_V] = block_v
    for b in range((nc + BLOCK - 1) // BLOCK - 1, -1, -1):
        top_p = max(top_p, peaks[b, BLOCK_P])
        top_v = max(top_v, peaks[b, BLOCK_V])
        peaks[b, TAIL_P] = top_p
        peaks[b, TAIL_V] = top_v
    top[TOP_P], top[TOP_V], top[FIRST_P], top[FIRST_V] = top_p, top_v, peaks[0, BLOCK_P], peaks[0, BLOCK_V]
    return up


@njit(cache=True)
def _gather(
    n1,
    n2,
    n3,
    w2n,
    slots,
    slot_of,
    window_of,
    window_rep,
    rising,
    ready,
    row_top,
    order_row,
    order_top,
    order_cheap,
    order_exact,
):
    """Per order at held (n1, n2, n3): its row of hp/hv and that row's `top` (see `_summary`; its bounds when the
    row is not computed yet, which `order_exact` records), whether it is its row's cheapest order, or −∞ for an
    order that can never be chosen. That is a dearer member of a row that never falls as cash rises: it only
    differs from the row's cheapest order (which the scan meets first) by holding Δ ≥ 1 less cash, so it
    has P̂ no higher and V̂ lower by ≥ Δ. Returns, for the scan's early exit, the largest P̂ of any order, the
    largest V̂ of any order and the largest V̂ of any order that can be admissible."""
    best_p = -np.inf
    best_v = -np.inf
    best_v_adm = -np.inf
    for o1 in range(ORDERS):
        w1 = window_of[0, n1, o1]
        cheap1 = window_rep[0, n1, w1] == o1
        for o2 in range(ORDERS):
            w2 = window_of[1, n2, o2]
            cheap12 = cheap1 and window_rep[1, n2, w2] == o2
            base = (w1 * w2n + w2) * slots
            for o3 in range(ORDERS):
                w3 = window_of[2, n3, o3]
                row = base + slot_of[w3]
                o = (o1 * ORDERS + o2) * ORDERS + o3
                order_row[o] = row
                order_cheap[o] = cheap12 and window_rep[2, n3, w3] == o3
                order_exact[o] = ready[row]
                if rising[row] and not order_cheap[o]:
                    order_top[o, TOP_P] = -np.inf
                    continue
                for j in range(4):  # element by element: an array assignment compiles numba's shape-error path (~3 s)
                    order_top[o, j] = row_top[row, j]
                best_p = max(best_p, row_top[row, TOP_P])
                best_v = max(best_v, row_top[row, TOP_V])
                if row_top[row, TOP_P] >= THRESHOLD - TOL:
                    best_v_adm = max(best_v_adm, row_top[row, TOP_V])
    return best_p, best_v, best_v_adm


@njit(cache=True, inline="always")
def _may_displace(top, k, nc, floors, blocks):
    """Whether an order of cost k whose row has `top` (see `_summary`) can displace an incumbent: not when its
    largest P̂ and V̂ cannot displace any at the levels it can afford, nor when its first block cannot displace
    those of its cost's own cash block (the only levels that read that block alone) while the whole row cannot
    displace any above it."""
    top_p, top_v = top[TOP_P], top[TOP_V] - k
    if _unbeatable(top_p, top_v, top_v, floors, k):
        return False
    above = (k // BLOCK + 1) * BLOCK
    first_v = top[FIRST_V] - k
    return not (
        _unbeatable(top[FIRST_P], first_v, first_v, blocks, k // BLOCK)
        and (above >= nc or _unbeatable(top_p, top_v, top_v, floors, above))
    )


@njit(cache=True)
def _select(
    n1,
    n2,
    n3,
    nc,
    hp,
    hv,
    peaks,
    order_row,
    order_top,
    order_cheap,
    order_exact,
    best,
    orders_sorted,
    order_cost,
    probs,
    bp,
    bv,
    badm,
    bidx,
    floors,
    blocks,
    out_p,
    out_v,
    out_policy,
    rising,
    ready,
    row_top,
    a2p,
    a2v,
    kernel1,
    top1,
    top2,
    top3,
    w2n,
    slots,
    w3_of_slot,
    n_cash,
    reach,
    floor_prices,
):
    """Eq. 12 for held inventory (n1, n2, n3), every cash level and price scenario. Order o's P̂/V̂ at cash
    c are row order_row[o] of hp/hv at c − cost.

    Besides the skipped class members (TOP_P = −∞) and the cash blocks `_scan` skips, two exact shortcuts,
    both against the current incumbents at every cash level the order can afford (`floors`, suffix
    summaries): (1) an order whose row's largest P̂ and V̂ cannot displace them is skipped, and so is one
    whose row's first block cannot displace those in its cost's own cash block (the only levels that read
    that block alone) while the whole row cannot displace any above; (2) the scan stops once no order at
    all could (`best` bounds every order's P̂ and V̂; a dearer order's V̂ is lower by its cost, and suffix
    summaries only cover fewer levels at higher cash). (2) is exact by induction: if no remaining order
    can displace an incumbent, the next one changes nothing, and the bound still holds. Orders arrive by
    ascending cost, so floors below the current cost are never read again and are left stale. An order whose
    tests passed on its row's bounds (`order_exact` false) has its row computed if no order did before, and
    takes the tests again on the row itself (see `solve_round`'s `lazy`)."""
    best_p, best_v, best_v_adm = best
    for c in range(nc):
        out_p[n1, n2, n3, c] = 0.0
        out_v[n1, n2, n3, c] = 0.0
    for s in range(probs.shape[0]):
        for c in range(nc):
            bp[c] = -1.0
            bv[c] = 0.0
            badm[c] = False
            bidx[c] = 0
        for b in range((nc + BLOCK - 1) // BLOCK):
            _summarise_block(b, nc, badm, bp, bv, blocks)
        _refresh_floors(0, nc - 1, nc, badm, bp, bv, floors)
        for j in range(orders_sorted.shape[1]):
            o = orders_sorted[s, j]
            k = order_cost[s, o]
            if k >= nc:
                break
            top_p = order_top[o, TOP_P]
            if top_p == -np.inf:
                continue
            if _unbeatable(best_p, best_v - k, best_v_adm - k, floors, k):
                break
            if not _may_displace(order_top[o], k, nc, floors, blocks):
                continue
            row = order_row[o]
            if not order_exact[o]:
                if not ready[row]:
                    _fill_row(
                        row,
                        hp,
                        hv,
                        peaks,
                        row_top,
                        rising,
                        ready,
                        a2p,
                        a2v,
                        kernel1,
                        top1,
                        top2,
                        top3,
                        w2n,
                        slots,
                        w3_of_slot,
                        n_cash,
                        reach,
                        floor_prices,
                    )
                if (rising[row] and not order_cheap[o]) or not _may_displace(row_top[row], k, nc, floors, blocks):
                    continue
            hi = _scan(hp, hv, peaks, row, k, o, nc, badm, bp, bv, bidx, blocks, floors)
            if hi >= 0:
                _refresh_floors(k, hi, nc, badm, bp, bv, floors)
        for c in range(nc):
            out_p[n1, n2, n3, c] += probs[s] * bp[c]
            out_v[n1, n2, n3, c] += probs[s] * bv[c]
            out_policy[n1, n2, n3, c, s] = bidx[c]


@njit(cache=True)
def forward_round(
    mass,
    policy,
    kernel,
    order_cost,
    probs,
    output,
    violation,
    next_memory,
    deduction,
    due,
    leftover,
    values,
    payment_now,
    mid,
    totals,
):
    """Push one round of joint-RCC occupancy mass through the table ([CS-28]), and read off on the way what
    the RC Customer's enumeration of ContractSim paper, App. C.5 needs: phase 0 is exactly the mass that enumeration keeps alive, so
    a violation leaving phase 0 is its DEAD mass.

    mass: (2, n_mem, B1+1, B2+1, B3+1, C+1) by phase (0: no breach; 1: Supplier breached, the RCC
    Customer pays nothing from now on). mid: (2, n_mem, K³ leftover, C'+1) before spoilage, K = inventory
    cap + 1 (kernel: (3, K, orders, K)). due: the next payment less the capped deduction, per (μ, m).
    totals: [spend, value, paid (both phases); dead, supplier value in the DP's accounting (phase 0)].
    """
    n_phase, n_mem, b1, b2, b3, n_cash = mass.shape
    side = kernel.shape[3]
    c_next = mid.shape[3] - 1
    lo, hi = _support(kernel)
    for ph in range(n_phase):
        for mu in range(n_mem):
            for n1 in range(b1):
                for n2 in range(b2):
                    for n3 in range(b3):
                        for c in range(n_cash):
                            w = mass[ph, mu, n1, n2, n3, c]
                            if w == 0.0:
                                continue
                            for s in range(probs.shape[0]):
                                ws = w * probs[s]
                                o = policy[mu, n1, n2, n3, c, s]
                                if o < 0:
                                    raise ValueError("the enumeration reached a state the table does not solve")
                                k = order_cost[s, o]
                                o1 = o // (ORDERS * ORDERS)
                                o2 = (o // ORDERS) % ORDERS
                                o3 = o % ORDERS
                                totals[0] += ws * k
                                if ph == 0:
                                    totals[4] += ws * (payment_now - k)
                                cash = c - k
                                for m1 in range(lo[0, n1, o1], hi[0, n1, o1]):
                                    w1 = kernel[0, n1, o1, m1]
                                    if w1 == 0.0:
                                        continue
                                    for m2 in range(lo[1, n2, o2], hi[1, n2, o2]):
                                        w2 = kernel[1, n2, o2, m2]
                                        if w2 == 0.0:
                                            continue
                                        for m3 in range(lo[2, n3, o3], hi[2, n3, o3]):
                                            w3 = kernel[2, n3, o3, m3]
                                            if w3 == 0.0:
                                                continue
                                            ww = ws * w1 * w2 * w3
                                            m = (m1 * side + m2) * side + m3
                                            y0 = output[mu, m, 0]
                                            y1 = output[mu, m, 1]
                                            y2 = output[mu, m, 2]
                                            totals[1] += ww * (values[0] * y0 + values[1] * y1 + values[2] * y2)
                                            ded = deduction[mu, m]
                                            due_next = due[mu, m]
                                            bad = violation[mu, m]
                                            nm = next_memory[mu, m]
                                            left = leftover[mu, m]
                                            if ph == 0:
                                                totals[4] -= ww * ded
                                                if not bad:
                                                    totals[2] += ww * due_next
                                                    mid[0, nm, left, min(cash + due_next, c_next)] += ww
                                                    continue
                                                totals[3] += ww
                                            if due_next == 0:
                                                mid[1, nm, left, min(cash, c_next)] += ww


@njit(cache=True)
def _support(kernel):
    """lo, hi per (input, holding, order): the receipts m with kernel weight lie in lo ≤ m < hi. The
    enumeration loops over that range only; outside it every weight is zero, and testing eleven zeros per
    input per state cost more than the additions themselves."""
    lo = np.zeros(kernel.shape[:3], dtype=np.int64)
    hi = np.zeros(kernel.shape[:3], dtype=np.int64)
    for x in range(kernel.shape[0]):
        for n in range(kernel.shape[1]):
            for o in range(kernel.shape[2]):
                for m in range(kernel.shape[3]):
                    if kernel[x, n, o, m] != 0.0:
                        if hi[x, n, o] == 0:
                            lo[x, n, o] = m
                        hi[x, n, o] = m + 1
    return lo, hi
