"""Compiled inner loops of the DP (numba).

numba earns its place here: choosing an order is a lexicographic scan with a threshold and 1e-9
tie tolerances over every (inventory, cash, price, order) — billions of branchy comparisons that
numpy could only do by materialising (inventory × order × cash) arrays of many gigabytes.
Compiled functions are cached on disk, so only the first run on a machine pays the compile time.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from solver.dp.problem import ORDER_SIDE as ORDERS
from solver.dp.problem import SIDE

THRESHOLD = 0.95  # p̄ = 1 − ε, inclusive ([CS-26])
TOL = 1e-9  # ε_num: values within this are ties ([CS-25])
SLACK = 1e-5  # > 2,197 orders × TOL: the most a chain of tolerated ties can move an incumbent


@njit(cache=True, inline="always")
def _scan(hp, hv, k, o, nc, badm, bp, bv, bidx):
    """Offer order o (cost k) at every cash level c ≥ k; True if it became the choice anywhere. [CS-25]:
    candidates arrive by ascending (cost, o), so an incumbent keeps every tie."""
    changed = False
    for c in range(k, nc):
        p_hat = hp[c - k]
        v_hat = hv[c - k] - k
        if p_hat >= THRESHOLD - TOL:
            if badm[c] and not (v_hat > bv[c] + TOL or (v_hat >= bv[c] - TOL and p_hat > bp[c] + TOL)):
                continue
            badm[c] = True
        elif badm[c] or not (p_hat > bp[c] + TOL or (p_hat >= bp[c] - TOL and v_hat > bv[c] + TOL)):
            continue
        bp[c] = p_hat
        bv[c] = v_hat
        bidx[c] = o
        changed = True
    return changed


@njit(cache=True, inline="always")
def _floors(nc, badm, bp, bv, any_adm, adm_v, any_weak, weak_p):
    """Suffix summaries of the incumbents over cash levels ≥ c: is any admissible (and the least V̂ among
    those), is any not (and the least P̂ among those). An order whose best P̂ and V̂ over all cash cannot
    beat these at the levels it can afford is skipped; incumbents only improve (up to SLACK of accumulated
    tie tolerance), so the summaries are rebuilt only after a scan changed one."""
    seen_adm = seen_weak = False
    least_v = np.inf
    least_p = np.inf
    for c in range(nc - 1, -1, -1):
        if badm[c]:
            seen_adm = True
            least_v = min(least_v, bv[c])
        else:
            seen_weak = True
            least_p = min(least_p, bp[c])
        any_adm[c] = seen_adm
        adm_v[c] = least_v
        any_weak[c] = seen_weak
        weak_p[c] = least_p


@njit(cache=True, parallel=True)
def solve_round(gp, gv, box, caps, reach, floor_prices, kernel, classes, rep, count, point_mass, orders_sorted, order_cost,
                probs, out_p, out_v, out_policy):
    """One round, one memory state: for every held inventory n in the box, cash c and price scenario,
    P̂/V̂ of every order by exact expectation over receipts, then eq. 12's selection.

    gp, gv: (11, 11, 11, C+1) post-receipt continuation (already net of production, verdict, deduction,
    spoilage). Expectations over receipts factorise per input and are taken one input at a time, once per
    receipt class; with exact receipts (`point_mass`) they are plain lookups into gp, gv. out_v holds
    Σ_p ν(p)·(V̂ − M_t); out_policy the chosen order index per price scenario.

    Only consistent states are solved: holding n at round t means n was bought at no less than the
    lowest prices, so cash ≤ reach − Σ_x n_x·min p_x, where reach is the most cash the round can see
    (before cash saturation folds the top levels into one index). The set is closed under the transition (what is
    held next was ordered now), so no solved value ever reads an unsolved one; entries above that
    cash stay 0 and are never looked up.
    """
    n_cash = gp.shape[3]
    cap1, cap2, cap3 = caps[0], caps[1], caps[2]
    if point_mass:
        g_rising = np.empty((SIDE, SIDE, SIDE), dtype=np.bool_)
        g_max_p = np.empty((SIDE, SIDE, SIDE))
        g_max_v = np.empty((SIDE, SIDE, SIDE))
        spent_m = np.empty((3, SIDE), dtype=np.int64)
        for x in range(3):
            for m in range(SIDE):
                spent_m[x, m] = floor_prices[x] * m
        _summaries(gp, gv, cap1 + 1, cap2 + 1, cap3 + 1, n_cash, reach + 1, spent_m, g_rising, g_max_p, g_max_v)
    # numba hands each thread one contiguous block of iterations; low holdings cost the most (every order
    # is distinct), so interleave cheap and dear ones: 0, B, 1, B−1, …
    top = box[2]
    for i3 in prange(top + 1):
        half = np.int64(i3) // 2  # prange indices are unsigned; mixing them with signed ones yields floats
        n3 = half if i3 % 2 == 0 else top - half
        k3n = count[2, n3]
        room3 = reach + 1 - floor_prices[2] * n3
        nc3 = max(1, min(n_cash, room3))
        rows = np.empty((3, ORDERS), dtype=np.int64)
        spent = np.zeros((3, ORDERS), dtype=np.int64)
        bp = np.empty(n_cash)
        bv = np.empty(n_cash)
        badm = np.empty(n_cash, dtype=np.bool_)
        bidx = np.empty(n_cash, dtype=np.int16)
        floors = (np.empty(n_cash, dtype=np.bool_), np.empty(n_cash), np.empty(n_cash, dtype=np.bool_), np.empty(n_cash))
        if point_mass:
            for n2 in range(box[1] + 1):
                for n1 in range(box[0] + 1):
                    for x in range(3):
                        held = n1 if x == 0 else (n2 if x == 1 else n3)
                        for q in range(count[x, held]):
                            rows[x, q] = np.argmax(kernel[x, held, rep[x, held, q]])
                    nc = max(1, min(n_cash, room3 - floor_prices[1] * n2 - floor_prices[0] * n1))
                    _select(n1, n2, n3, nc, gp, gv, rows, g_rising, g_max_p, g_max_v, classes, rep, orders_sorted,
                            order_cost, probs, bp, bv, badm, bidx, floors, out_p, out_v, out_policy)
            continue
        for x in range(3):
            for q in range(ORDERS):
                rows[x, q] = q
        a3p = np.zeros((cap1 + 1, cap2 + 1, ORDERS, n_cash))
        a3v = np.zeros((cap1 + 1, cap2 + 1, ORDERS, n_cash))
        for q3 in range(k3n):
            o3 = rep[2, n3, q3]
            for m3 in range(cap3 + 1):
                w = kernel[2, n3, o3, m3]
                if w == 0.0:
                    continue
                _accumulate(a3p[:, :, q3], a3v[:, :, q3], gp[:, :, m3], gv[:, :, m3], w, cap1 + 1, cap2 + 1, nc3)
        a2p = np.empty((cap1 + 1, ORDERS, ORDERS, n_cash))
        a2v = np.empty((cap1 + 1, ORDERS, ORDERS, n_cash))
        hp = np.empty((ORDERS, ORDERS, ORDERS, n_cash))
        hv = np.empty((ORDERS, ORDERS, ORDERS, n_cash))
        rising = np.empty((ORDERS, ORDERS, ORDERS), dtype=np.bool_)
        max_p = np.empty((ORDERS, ORDERS, ORDERS))
        max_v = np.empty((ORDERS, ORDERS, ORDERS))
        for n2 in range(box[1] + 1):
            k2n = count[1, n2]
            room2 = room3 - floor_prices[1] * n2
            nc2 = max(1, min(n_cash, room2))
            a2p[:] = 0.0
            a2v[:] = 0.0
            for q2 in range(k2n):
                o2 = rep[1, n2, q2]
                for m2 in range(cap2 + 1):
                    w = kernel[1, n2, o2, m2]
                    if w == 0.0:
                        continue
                    _accumulate(a2p[:, q2], a2v[:, q2], a3p[:, m2], a3v[:, m2], w, cap1 + 1, k3n, nc2)
            for n1 in range(box[0] + 1):
                k1n = count[0, n1]
                room = room2 - floor_prices[0] * n1
                nc = max(1, min(n_cash, room))
                for q1 in range(k1n):
                    o1 = rep[0, n1, q1]
                    for q2 in range(k2n):
                        for q3 in range(k3n):
                            for c in range(nc):
                                hp[q1, q2, q3, c] = 0.0
                                hv[q1, q2, q3, c] = 0.0
                    for m1 in range(cap1 + 1):
                        w = kernel[0, n1, o1, m1]
                        if w == 0.0:
                            continue
                        _accumulate(hp[q1], hv[q1], a2p[m1], a2v[m1], w, k2n, k3n, nc)
                for x in range(3):
                    held = n1 if x == 0 else (n2 if x == 1 else n3)
                    for q in range(count[x, held]):
                        spent[x, q] = floor_prices[x] * rep[x, held, q]
                _summaries(hp, hv, k1n, k2n, k3n, nc, room, spent, rising, max_p, max_v)
                _select(n1, n2, n3, nc, hp, hv, rows, rising, max_p, max_v, classes, rep, orders_sorted, order_cost,
                        probs, bp, bv, badm, bidx, floors, out_p, out_v, out_policy)


@njit(cache=True, inline="always")
def _accumulate(dst_p, dst_v, src_p, src_v, w, n_i, n_j, nc):
    """dst[i, j, c] += w · src[i, j, c]: one receipt outcome's share, for P̂ and V̂ together. Each of the
    three per-input expectation stages is this, on views that put the contracted input first."""
    for i in range(n_i):
        for j in range(n_j):
            for c in range(nc):
                dst_p[i, j, c] += w * src_p[i, j, c]
                dst_v[i, j, c] += w * src_v[i, j, c]


@njit(cache=True)
def _summaries(hp, hv, k1, k2, k3, n_cash, room, spent, rising, max_p, max_v):
    """Per row of P̂/V̂ continuation values: does it never fall as cash rises, and its largest values.
    Row (q1, q2, q3) is only defined below room − Σ spent[x, q_x] (what its receipts must have cost)."""
    for q1 in range(k1):
        for q2 in range(k2):
            for q3 in range(k3):
                up = True
                top_p = hp[q1, q2, q3, 0]
                top_v = hv[q1, q2, q3, 0]
                for c in range(1, min(n_cash, room - spent[0, q1] - spent[1, q2] - spent[2, q3])):
                    if hp[q1, q2, q3, c] < hp[q1, q2, q3, c - 1] or hv[q1, q2, q3, c] < hv[q1, q2, q3, c - 1]:
                        up = False
                    top_p = max(top_p, hp[q1, q2, q3, c])
                    top_v = max(top_v, hv[q1, q2, q3, c])
                rising[q1, q2, q3] = up
                max_p[q1, q2, q3] = top_p
                max_v[q1, q2, q3] = top_v


@njit(cache=True)
def _select(n1, n2, n3, nc, hp, hv, rows, rising, max_p, max_v, classes, rep, orders_sorted, order_cost, probs,
            bp, bv, badm, bidx, floors, out_p, out_v, out_policy):
    """Eq. 12 for held inventory (n1, n2, n3), every cash level and price scenario. Order o's P̂/V̂ at cash
    c are row (rows[x][class of o_x]) of hp/hv at c − cost.

    Two exact shortcuts. (1) Within a receipt class a dearer member only differs by holding Δ ≥ 1 less
    cash; where the row never falls as cash rises (`rising`, checked exactly) it has P̂ no higher and V̂
    lower by ≥ Δ than the cheapest member, which the scan meets first, so it is skipped. (2) An order whose
    best P̂ and V̂ over all cash cannot beat any incumbent at the cash levels it can afford is skipped."""
    any_adm, adm_v, any_weak, weak_p = floors
    for c in range(nc):
        out_p[n1, n2, n3, c] = 0.0
        out_v[n1, n2, n3, c] = 0.0
    for s in range(probs.shape[0]):
        for c in range(nc):
            bp[c] = -1.0
            bv[c] = 0.0
            badm[c] = False
            bidx[c] = 0
        stale = True
        for j in range(orders_sorted.shape[1]):
            o = orders_sorted[s, j]
            k = order_cost[s, o]
            if k >= nc:
                break
            o1 = o // (ORDERS * ORDERS)
            o2 = (o // ORDERS) % ORDERS
            o3 = o % ORDERS
            q1 = classes[0, n1, o1]
            q2 = classes[1, n2, o2]
            q3 = classes[2, n3, o3]
            r1 = rows[0, q1]
            r2 = rows[1, q2]
            r3 = rows[2, q3]
            if rising[r1, r2, r3] and (o1 != rep[0, n1, q1] or o2 != rep[1, n2, q2] or o3 != rep[2, n3, q3]):
                continue
            if stale:
                _floors(nc, badm, bp, bv, any_adm, adm_v, any_weak, weak_p)
                stale = False
            top_p = max_p[r1, r2, r3]
            if (not any_weak[k] or top_p < weak_p[k] - SLACK) and \
                    (not any_adm[k] or top_p < THRESHOLD - TOL or max_v[r1, r2, r3] - k < adm_v[k] - SLACK):
                continue
            stale = _scan(hp[r1, r2, r3], hv[r1, r2, r3], k, o, nc, badm, bp, bv, bidx)
        for c in range(nc):
            out_p[n1, n2, n3, c] += probs[s] * bp[c]
            out_v[n1, n2, n3, c] += probs[s] * bv[c]
            out_policy[n1, n2, n3, c, s] = bidx[c]


@njit(cache=True)
def forward_round(mass, policy, kernel, order_cost, probs, output, violation, next_memory, deduction,
                  leftover, values, payment_now, payment_next, joint_rcc, mid, totals):
    """Push one round of occupancy mass through the table (spec §14; [CS-28] when joint_rcc).

    mass: (2, n_mem, B1+1, B2+1, B3+1, C+1) by phase (0: no breach; 1: Supplier breached, the RCC
    Customer pays nothing from now on). mid: (2, n_mem, 1331 leftover, C'+1) before spoilage.
    totals: [spend, value, paid, dead, supplier value in the DP's accounting].
    """
    n_phase, n_mem, b1, b2, b3, n_cash = mass.shape
    c_next = mid.shape[3] - 1
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
                                k = order_cost[s, o]
                                o1 = o // (ORDERS * ORDERS)
                                o2 = (o // ORDERS) % ORDERS
                                o3 = o % ORDERS
                                totals[0] += ws * k
                                totals[4] += ws * (payment_now - k)
                                cash = c - k
                                for m1 in range(SIDE):
                                    w1 = kernel[0, n1, o1, m1]
                                    if w1 == 0.0:
                                        continue
                                    for m2 in range(SIDE):
                                        w2 = kernel[1, n2, o2, m2]
                                        if w2 == 0.0:
                                            continue
                                        for m3 in range(SIDE):
                                            w3 = kernel[2, n3, o3, m3]
                                            if w3 == 0.0:
                                                continue
                                            ww = ws * w1 * w2 * w3
                                            m = (m1 * SIDE + m2) * SIDE + m3
                                            y0 = output[mu, m, 0]
                                            y1 = output[mu, m, 1]
                                            y2 = output[mu, m, 2]
                                            totals[1] += ww * (values[0] * y0 + values[1] * y1 + values[2] * y2)
                                            ded = deduction[mu, m]
                                            due = payment_next - ded
                                            bad = violation[mu, m]
                                            totals[4] -= ww * ded
                                            nm = next_memory[mu, m]
                                            left = leftover[mu, m]
                                            if ph == 0 and not bad:
                                                totals[2] += ww * due
                                                mid[0, nm, left, min(cash + due, c_next)] += ww
                                            elif not joint_rcc:
                                                totals[3] += ww
                                            elif due == 0:
                                                mid[1, nm, left, min(cash, c_next)] += ww
